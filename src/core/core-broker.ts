import { InvalidArgumentError } from "../contract/errors.js";
import type {
  AttemptError,
  BrowseOptions,
  CancelMessageOptions,
  CancelOutcome,
  DeleteSettledOptions,
  HeartbeatResult,
  MessageRecord,
  WorkerInfo,
  WorkerRecord,
} from "../contract/job-service.js";
import { MAX_RENEW_BATCH } from "../contract/limits.js";
import type {
  AbandonOptions,
  CompleteItem,
  CompleteOptions,
  CompleteResult,
  LockRef,
  RejectOptions,
  RenewBatchOptions,
  RenewResult,
} from "../contract/types.js";
import type { Clock } from "./clock.js";
import { leaseCap } from "./lease.js";
import { DEFAULT_WORKER_STALE_MS, MAX_WAIT_MS } from "./limits.js";
import type { Dialect } from "./port.js";
import { browseQuery, deleteSettledQuery, progressValue } from "./record-input.js";
import { awaitSettled } from "./settled-waits.js";
import { nonNegativeDuration, requireName, seqNumber, seqNumberList } from "./validate.js";
import * as namedLocks from "./verbs/named-locks.js";
import * as records from "./verbs/records.js";
import * as settle from "./verbs/settle.js";
import * as workers from "./verbs/workers.js";
import type { Waiters } from "./waiters.js";

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

  // (end of maintenance)

  // --- records: job records: cancel, progress, browse, errors, delete settled, promote, remove, workers, named locks ---

  /** The broker's time (`awaitSettled` parks against it). */
  abstract readonly clock: Clock;
  /**
   * Wake-ups of `awaitSettled`, keyed by sequence number: the broker notifies them after its
   * commits that settle messages (its `Effects.settled`), and as its connection sees fit.
   */
  protected abstract readonly settledWaiters: Waiters;
  /** `awaitSettled` re-checks at least this often (settlements its waiters never hear of). */
  protected readonly settledRecheckMs: number | undefined = undefined;

  cancelMessage(queue: string, seq: number, options: CancelMessageOptions = {}): Promise<CancelOutcome> {
    return this.guard(() => {
      const retain = nonNegativeDuration(options.retainMs, "retain_ms");
      const s = seqNumber(seq);
      return this.dialect.write((w) => records.cancelMessage(w, queue, s, options.lockToken, retain));
    });
  }

  setProgress(queue: string, seq: number, lockToken: string, progress: number): Promise<void> {
    return this.guard(() => {
      const p = progressValue(progress);
      const s = seqNumber(seq);
      return this.dialect.write((w) => records.setProgress(w, queue, s, lockToken, p), {
        oneStatement: true,
      });
    });
  }

  getMessages(seqNumbers: number[]): Promise<MessageRecord[]> {
    return this.guard(() => {
      const seqs = seqNumbers.map(seqNumber);
      return this.dialect.read(() => records.getMessages(seqs));
    });
  }

  browse(options: BrowseOptions = {}): Promise<MessageRecord[]> {
    return this.guard(() => {
      const q = browseQuery(options);
      return this.dialect.read(() => records.browse(q));
    });
  }

  messageErrors(seq: number): Promise<AttemptError[]> {
    return this.guard(() => {
      const s = seqNumber(seq);
      return this.dialect.read(() => records.messageErrors(s));
    });
  }

  awaitSettled(
    seqNumbers: number[],
    options: { waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<number[]> {
    return this.guard(() => {
      const seqs = seqNumbers.map(seqNumber);
      const wait = Math.min(Math.max(0, Math.trunc(options.waitMs ?? 0) || 0), MAX_WAIT_MS);
      return awaitSettled(
        this.clock,
        this.settledWaiters,
        () => this.dialect.read(() => records.settledOf(seqs)),
        seqs,
        wait,
        options.signal,
        this.settledRecheckMs,
      );
    });
  }

  deleteSettled(queue: string, options: DeleteSettledOptions = {}): Promise<number> {
    return this.guard(() => {
      const q = deleteSettledQuery(options);
      return this.dialect.write((w) => records.deleteSettled(w, queue, q), { oneStatement: true });
    });
  }

  promoteMessages(queue: string, seqNumbers: number[]): Promise<number> {
    return this.guard(() => {
      const seqs = seqNumberList(seqNumbers);
      return this.dialect.write((w) => records.promoteMessages(w, queue, seqs), { oneStatement: true });
    });
  }

  removeMessages(queue: string, seqNumbers: number[]): Promise<number> {
    return this.guard(() => {
      const seqs = seqNumberList(seqNumbers);
      return this.dialect.write((w) => records.removeMessages(w, queue, seqs), { oneStatement: true });
    });
  }

  heartbeat(worker: WorkerInfo, options: { staleAfterMs?: number } = {}): Promise<HeartbeatResult> {
    return this.guard(() => {
      requireName(worker?.workerId, "worker");
      const stale =
        options.staleAfterMs && options.staleAfterMs > 0 ? options.staleAfterMs : DEFAULT_WORKER_STALE_MS;
      return this.dialect.write((w) => workers.heartbeat(w, worker, stale));
    });
  }

  listWorkers(): Promise<WorkerRecord[]> {
    return this.dialect.read(() => workers.listWorkers());
  }

  removeWorker(workerId: string): Promise<boolean> {
    return this.dialect.write(() => workers.removeWorker(workerId), { oneStatement: true });
  }

  acquireLock(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.guard(() => {
      requireName(name, "lock");
      requireName(owner, "lock owner");
      if (nonNegativeDuration(ttlMs, "ttl_ms") === 0)
        throw new InvalidArgumentError("mqlite: ttl_ms must be positive");
      return this.dialect.write((w) => namedLocks.acquireLock(w, name, owner, ttlMs), { oneStatement: true });
    });
  }

  releaseLock(name: string, owner: string): Promise<boolean> {
    return this.dialect.write((w) => namedLocks.releaseLock(w, name, owner), { oneStatement: true });
  }

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
