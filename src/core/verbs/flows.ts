import { LockLostError } from "../../contract/errors.js";
import type {
  EventInput,
  EventPage,
  MessageLogEntry,
  MessageLogPage,
  MetricIncrement,
  MetricKind,
  MetricPoint,
  MetricsQuery,
  StoredEvent,
} from "../../contract/job-service.js";
import {
  EVENT_LOG_RETENTION_MS,
  MAX_EVENT_LOG_EVENTS,
  MAX_MESSAGE_LOG_LINES,
} from "../../contract/limits.js";
import { bucketOf, metricsRange, oldestKeptBucket } from "../metrics-input.js";
import { ask, type Verb, type WriteScope } from "../port.js";

/**
 * The statements of the flows family: so far the job logs, the event log and the per-minute
 * metrics (a message's log lines, the store-wide event log, counts of settled jobs).
 */
export interface FlowOps {
  /**
   * Whether `token` holds the lease on message `seq` of `queue`. PostgreSQL also locks the row, so
   * that appends to one message's log take turns (each numbers its lines after the last).
   */
  holdsLease(a: { queue: string; seq: number; token: string }): boolean;
  /**
   * Appends `lines` to message `seq`'s log, numbered after its last line, then drops all but the
   * latest `keep` lines; answers how many lines the log keeps. `lines.length ≤ keep`.
   */
  appendLog(a: { seq: number; now: number; lines: string[]; keep: number }): number;
  /** Up to `limit` lines of message `seq`'s log from `offset`, oldest first. */
  logLines(a: { seq: number; offset: number; limit: number }): MessageLogEntry[];
  /** How many lines message `seq`'s log keeps. */
  logCount(a: { seq: number }): number;
  /**
   * Appends `events` at `now`, in order, then drops all but the latest `keep` events and those
   * older than `cutoff` (ids grow with time: the oldest come first). Appends take turns, so ids
   * commit in id order.
   */
  appendEvents(a: { events: EventInput[]; now: number; keep: number; cutoff: number }): void;
  /** Up to `limit` (> 0) events with an id above `afterId`, oldest first. */
  eventsAfter(a: { afterId: number; limit: number }): StoredEvent[];
  /** The newest event's id (0 when the log is empty). */
  lastEventId(): number;
  /**
   * Adds each increment to its bucket of `minute`, then drops the buckets before `oldest`. Alone in
   * its transaction (`addMetrics`), a dialect may commit it without waiting for durability;
   * `inWrite`: it rides in another verb's transaction, whose commit must stay as durable as ever.
   */
  addMetrics(a: { minute: number; increments: MetricIncrement[]; oldest: number; inWrite?: boolean }): void;
  /** The sums per bucket in `[from, to]` of `kind`, of all queues or (given) of `queues` (not empty). */
  readMetrics(a: { kind: MetricKind; from: number; to: number; queues?: string[] }): MetricPoint[];
}

/** Appends checked lines to a locked message's log; answers how many lines it keeps. */
export function* appendMessageLog(
  s: WriteScope,
  queue: string,
  seq: number,
  token: string,
  lines: string[],
): Verb<number> {
  if (!token || !(yield* ask((o) => o.flows.holdsLease({ queue, seq, token })))) throw new LockLostError();
  return yield* ask((o) => o.flows.appendLog({ seq, now: s.now, lines, keep: MAX_MESSAGE_LOG_LINES }));
}

export function* messageLog(seq: number, offset: number, limit: number): Verb<MessageLogPage> {
  const entries = yield* ask((o) => o.flows.logLines({ seq, offset, limit }));
  const total = yield* ask((o) => o.flows.logCount({ seq }));
  return { entries, total };
}

/** Appends checked events (at least one); the log keeps the latest, none past its retention. */
export function* appendEvents(s: WriteScope, events: EventInput[]): Verb<void> {
  yield* ask((o) =>
    o.flows.appendEvents({
      events,
      now: s.now,
      keep: MAX_EVENT_LOG_EVENTS,
      cutoff: s.now - EVENT_LOG_RETENTION_MS,
    }),
  );
}

/** A page of the event log after `afterId`; `limit` 0 reads only the newest id. */
export function* readEvents(afterId: number, limit: number): Verb<EventPage> {
  const events = limit > 0 ? yield* ask((o) => o.flows.eventsAfter({ afterId, limit })) : [];
  const lastId = yield* ask((o) => o.flows.lastEventId());
  return { events, lastId };
}

/** Adds checked, merged increments (at least one) to the current minute's buckets. */
export function* addMetrics(s: WriteScope, increments: MetricIncrement[]): Verb<void> {
  yield* ask((o) =>
    o.flows.addMetrics({ minute: bucketOf(s.now), increments, oldest: oldestKeptBucket(s.now) }),
  );
}

/**
 * Counts messages the engine itself failed for good (a lapsed lease at the delivery limit, a flow
 * parent failed by its child) in the `failed` metrics, in the transaction that failed them: the
 * job runner counts only the outcomes it settles.
 */
export function* countFailed(now: number, queues: readonly string[]): Verb<void> {
  if (queues.length === 0) return;
  const counts = new Map<string, number>();
  for (const q of queues) counts.set(q, (counts.get(q) ?? 0) + 1);
  const increments: MetricIncrement[] = [...counts].map(([queue, count]) => ({
    queue,
    kind: "failed",
    count,
  }));
  yield* ask((o) =>
    o.flows.addMetrics({ minute: bucketOf(now), increments, oldest: oldestKeptBucket(now), inWrite: true }),
  );
}

/** The buckets of `kind` that `query` asks for, its defaults taken at `now`. */
export function* readMetrics(
  kind: MetricKind,
  query: MetricsQuery | undefined,
  now: number,
): Verb<MetricPoint[]> {
  const { from, to, queues } = metricsRange(query, now);
  if (queues !== undefined && queues.length === 0) return [];
  return yield* ask((o) => o.flows.readMetrics({ kind, from, to, queues }));
}
