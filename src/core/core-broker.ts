import { InvalidArgumentError } from "../contract/errors.js";
import { MAX_RENEW_BATCH } from "../contract/limits.js";
import type { Logger } from "../contract/logger.js";
import type {
  AbandonOptions,
  CompleteItem,
  CompleteOptions,
  CompleteResult,
  LockRef,
  PurgeOptions,
  RedriveOptions,
  RejectOptions,
  RenewBatchOptions,
  RenewResult,
} from "../contract/types.js";
import type { Clock } from "./clock.js";
import type { DlqBounds } from "./dlq-bounds.js";
import { leaseCap } from "./lease.js";
import { Loops, type MaintenanceStep } from "./loops.js";
import { emptyResult, type MaintenanceResult, mergeResult } from "./maintenance-result.js";
import type { Dialect } from "./port.js";
import { nonNegative, nonNegativeDuration, seqNumber } from "./validate.js";
import * as deadLetters from "./verbs/dead-letters.js";
import * as maintenance from "./verbs/maintenance.js";
import * as settle from "./verbs/settle.js";

/**
 * The broker's verbs, written once over a storage dialect. A verb validates its input here (bad
 * input is refused before any transaction), then runs its rule (`verbs/*.ts`) in the dialect's
 * transaction. The SQLite and PostgreSQL brokers extend this class with their connection handling.
 */
export abstract class CoreBroker {
  /** The dialect's transactions (set by the subclass's constructor). */
  protected abstract readonly dialect: Dialect;

  // --- settlement -------------------------------------------------------------------------------

  complete(queue: string, seq: number, lockToken: string, options?: CompleteOptions): Promise<void> {
    return this.guard(() => {
      const keep = keepOptions(options);
      const s = seqNumber(seq);
      return this.dialect.write((w) => settle.complete(w, queue, s, lockToken, keep), { oneStatement: true });
    });
  }

  completeBatch(queue: string, items: CompleteItem[]): Promise<CompleteResult[]> {
    return this.guard(() => {
      const refs = items.map((i) => ({
        seqNumber: seqNumber(i.seqNumber),
        lockToken: i.lockToken,
        keep: keepOptions(i),
      }));
      return this.dialect.write((w) => settle.completeBatch(w, queue, refs), { oneStatement: true });
    });
  }

  abandon(queue: string, seq: number, lockToken: string, options: AbandonOptions = {}): Promise<void> {
    return this.guard(() => {
      const input = {
        delayMs: nonNegativeDuration(options.delayMs, "delay_ms"),
        countDelivery: options.countDelivery !== false,
        error: options.error,
      };
      const s = seqNumber(seq);
      return this.dialect.write((w) => settle.abandon(w, queue, s, lockToken, input), { oneStatement: true });
    });
  }

  reject(queue: string, seq: number, lockToken: string, options: RejectOptions = {}): Promise<void> {
    return this.guard(() => {
      const s = seqNumber(seq);
      return this.dialect.write((w) => settle.reject(w, queue, s, lockToken, options), {
        oneStatement: true,
      });
    });
  }

  defer(queue: string, seq: number, lockToken: string): Promise<void> {
    return this.guard(() => {
      const s = seqNumber(seq);
      return this.dialect.write((w) => settle.defer(w, queue, s, lockToken), { oneStatement: true });
    });
  }

  renew(queue: string, seq: number, lockToken: string): Promise<void> {
    return this.guard(() => {
      const s = seqNumber(seq);
      return this.dialect.write((w) => settle.renew(w, queue, s, lockToken), { oneStatement: true });
    });
  }

  renewBatch(queue: string, items: LockRef[], options: RenewBatchOptions = {}): Promise<RenewResult[]> {
    return this.guard(() => {
      if (items.length > MAX_RENEW_BATCH) {
        throw new InvalidArgumentError(`mqlite: at most ${MAX_RENEW_BATCH} renewals per batch`);
      }
      const capMs = leaseCap(options.lockDurationMs);
      if (items.every((i) => !i.lockToken)) {
        return Promise.resolve(items.map((i) => ({ seqNumber: i.seqNumber, ok: false })));
      }
      const refs = items.map((i) => ({ seqNumber: seqNumber(i.seqNumber), lockToken: i.lockToken }));
      return this.dialect.write((w) => settle.renewBatch(w, queue, refs, capMs), { oneStatement: true });
    });
  }

  // --- claim: receive, receiveDeferred, receiveAny, peek: claiming with ordering, priority, gates and long-polls ---

  // (end of claim)

  // --- send: send, schedule, cancel, publish, sendFlow, sendDebounced: insertion, fan-out, dedup ---

  // (end of send)

  // --- queues: queues and subscriptions: create, delete, list, stats, pause, subscribe, filters, reaping ---

  // (end of queues)

  // --- topics: declared and log topics: declare, read, ack, lease, nack, stats ---

  // (end of topics)

  // --- maintenance: the dead-letter queue and upkeep: redrive, purge, the background steps, retention ---

  /** The broker-wide DLQ retention bounds queues inherit. */
  protected abstract readonly dlqBounds: DlqBounds;
  /** The earliest scheduled delivery the scheduler's last pass saw (its next wake-up). */
  private nextDue: number | undefined;
  /** The earliest lease end the reaper's last pass saw (its next wake-up). */
  private nextLease: number | undefined;

  async redrive(queue: string, options: RedriveOptions = {}): Promise<number> {
    const max = nonNegative(options.max, "max");
    const olderThanMs = nonNegativeDuration(options.olderThanMs, "older_than_ms");
    const rate = nonNegative(options.ratePerSec, "rate_per_sec");
    const target = options.target && options.target !== queue ? options.target : undefined;
    const only = options.seqNumbers;
    const moveChunk = (limit: number) =>
      this.dialect.write((w) => deadLetters.redrive(w, queue, { max: limit, olderThanMs, only, target }));
    if (rate === 0) return moveChunk(max);
    // Rate-limited: a chunk of `rate` per second, each its own transaction.
    let total = 0;
    for (;;) {
      const want = max > 0 ? Math.min(rate, max - total) : rate;
      if (want <= 0) return total;
      const moved = await moveChunk(want);
      total += moved;
      if (moved < want) return total;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  purge(queue: string, options: PurgeOptions = {}): Promise<number> {
    return this.guard(() => {
      const max = nonNegative(options.max, "max");
      const olderThanMs = nonNegativeDuration(options.olderThanMs, "older_than_ms");
      return this.dialect.write((w) => deadLetters.purge(w, queue, max, olderThanMs));
    });
  }

  /**
   * Runs every background step once, now (whether or not this node runs the loops): reaper,
   * scheduler, TTL sweep, janitors, DLQ retention. For tests with a manual clock and the loops
   * switched off.
   */
  async runMaintenanceOnce(): Promise<MaintenanceResult> {
    const out = emptyResult();
    for (const step of ["reap", "schedule", "expire", "janitor", "retention"] as const) {
      mergeResult(out, await this.runMaintenanceStep(step));
    }
    return out;
  }

  /** Runs one background step in its own transaction; the scheduler and reaper note their next due time. */
  protected async runMaintenanceStep(step: MaintenanceStep): Promise<MaintenanceResult> {
    const { result, next } = await this.dialect.write((w) => maintenance.runStep(w, step, this.dlqBounds));
    if (step === "reap") this.nextLease = next;
    else if (step === "schedule") this.nextDue = next;
    return result;
  }

  /** The background loops over this broker's steps (the dialect decides when they run). */
  protected maintenanceLoops(deps: { clock: Clock; logger: Logger; reclaim?: () => void }): Loops {
    return new Loops({
      ...deps,
      run: (step) => this.runMaintenanceStep(step),
      nextScheduled: () => this.nextDue,
      nextLeaseEnd: () => this.nextLease,
    });
  }

  // (end of maintenance)

  // --- records: job records: cancel, progress, browse, errors, delete settled, promote, remove, workers, named locks ---

  // (end of records)

  // --- flows: flows, job logs, events and metrics: dependencies, message logs, the event log, per-minute metrics ---

  // (end of flows)

  /** Runs `fn`, turning a synchronous throw (refused input) into a rejected promise. */
  protected guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return fn();
    } catch (err) {
      return Promise.reject(err);
    }
  }
}

/** Validates `complete`'s options: what to keep, if anything. */
export function keepOptions(options: CompleteOptions | undefined): settle.KeepOptions | undefined {
  const retainMs = nonNegativeDuration(options?.retainMs, "retain_ms");
  if (retainMs === 0) return undefined;
  const r = options?.result;
  const result = r === undefined || r === null ? null : Buffer.from(r.buffer, r.byteOffset, r.byteLength);
  return { retainMs, result };
}
