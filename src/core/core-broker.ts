import { InvalidArgumentError } from "../contract/errors.js";
import type {
  EventInput,
  EventPage,
  MessageLogPage,
  MetricIncrement,
  MetricKind,
  MetricPoint,
  MetricsQuery,
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
import { checkEvents, checkLogLines, eventLimit, logPage } from "./flow-input.js";
import { leaseCap } from "./lease.js";
import { checkIncrements, metricKind } from "./metrics-input.js";
import type { Dialect } from "./port.js";
import { integer, nonNegativeDuration, seqNumber } from "./validate.js";
import * as flows from "./verbs/flows.js";
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

  // (end of maintenance)

  // --- records: job records: cancel, progress, browse, errors, delete settled, promote, remove, workers, named locks ---

  // (end of records)

  // --- flows: flows, job logs, events and metrics: dependencies, message logs, the event log, per-minute metrics ---

  appendMessageLog(queue: string, seq: number, lockToken: string, lines: string[]): Promise<number> {
    return this.guard(() => {
      checkLogLines(lines);
      const s = seqNumber(seq);
      return this.dialect.write((w) => flows.appendMessageLog(w, queue, s, lockToken, lines));
    });
  }

  messageLog(seq: number, options?: { offset?: number; limit?: number }): Promise<MessageLogPage> {
    return this.guard(() => {
      const s = seqNumber(seq);
      const { offset, limit } = logPage(options);
      return this.dialect.read(() => flows.messageLog(s, offset, limit));
    });
  }

  appendEvents(events: EventInput[]): Promise<void> {
    return this.guard(() => {
      checkEvents(events);
      if (events.length === 0) return Promise.resolve();
      return this.dialect.write((w) => flows.appendEvents(w, events));
    });
  }

  readEvents(afterId: number, options: { limit?: number } = {}): Promise<EventPage> {
    return this.guard(() => {
      const after = integer(afterId, "after_id");
      const limit = eventLimit(options.limit);
      return this.dialect.read(() => flows.readEvents(after, limit));
    });
  }

  addMetrics(increments: MetricIncrement[]): Promise<void> {
    return this.guard(() => {
      const merged = checkIncrements(increments);
      if (merged.length === 0) return Promise.resolve();
      return this.dialect.write((w) => flows.addMetrics(w, merged), { oneStatement: true });
    });
  }

  /** The query's defaults and bounds depend on the read's time: checked in the read. */
  readMetrics(kind: MetricKind, query?: MetricsQuery): Promise<MetricPoint[]> {
    return this.guard(() => {
      const k = metricKind(kind);
      return this.dialect.read((now) => flows.readMetrics(k, query, now));
    });
  }

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
