import { InvalidArgumentError } from "../contract/errors.js";
import type { DebounceOptions, MetricIncrement, MetricKind, MetricsQuery } from "../contract/job-service.js";
import {
  MAX_DEBOUNCE_KEY_BYTES,
  MAX_DEBOUNCE_MS,
  MAX_METRIC_INCREMENT,
  MAX_METRIC_INCREMENTS_PER_CALL,
  MAX_NAME_LIST,
  METRIC_BUCKET_MS,
  METRICS_RETENTION_MS,
} from "../contract/limits.js";
import { integer } from "./validate.js";

const KINDS: ReadonlySet<string> = new Set<MetricKind>(["completed", "failed"]);

/** Checks a metric kind. */
export function metricKind(kind: unknown): MetricKind {
  if (typeof kind !== "string" || !KINDS.has(kind))
    throw new InvalidArgumentError('mqlite: a metric kind is "completed" or "failed"');
  return kind as MetricKind;
}

/** The bucket (its start, epoch ms) of an instant. */
export function bucketOf(at: number): number {
  return Math.floor(at / METRIC_BUCKET_MS) * METRIC_BUCKET_MS;
}

/** The oldest bucket kept at `now`. */
export function oldestKeptBucket(now: number): number {
  return bucketOf(now - METRICS_RETENTION_MS);
}

/** Checks the increments of `addMetrics`, merged per (queue, kind). */
export function checkIncrements(increments: MetricIncrement[]): MetricIncrement[] {
  if (!Array.isArray(increments)) throw new InvalidArgumentError("mqlite: increments must be a list");
  if (increments.length > MAX_METRIC_INCREMENTS_PER_CALL)
    throw new InvalidArgumentError(
      `mqlite: at most ${MAX_METRIC_INCREMENTS_PER_CALL} metric increments per call`,
    );
  const merged = new Map<string, MetricIncrement>();
  for (const inc of increments) {
    if (inc === null || typeof inc !== "object")
      throw new InvalidArgumentError("mqlite: each metric increment must be an object");
    if (typeof inc.queue !== "string" || inc.queue.length === 0)
      throw new InvalidArgumentError("mqlite: a metric increment needs a queue");
    const kind = metricKind(inc.kind);
    const count = integer(inc.count, "count");
    if (count < 1 || count > MAX_METRIC_INCREMENT)
      throw new InvalidArgumentError(`mqlite: a metric count is 1..${MAX_METRIC_INCREMENT}`);
    const key = `${kind}\u0000${inc.queue}`;
    const had = merged.get(key);
    if (had) had.count += count;
    else merged.set(key, { queue: inc.queue, kind, count });
  }
  return [...merged.values()];
}

/** A validated `readMetrics` query: the buckets `[from, to]` (both bucket starts) and the queues. */
export interface MetricsRange {
  from: number;
  to: number;
  queues: string[] | undefined;
}

/**
 * Checks `readMetrics`' query against `now`: `from ≤ to`, neither negative, and at most
 * `METRICS_RETENTION_MS` apart (a read covers at most 10,080 buckets).
 */
export function metricsRange(query: MetricsQuery | undefined, now: number): MetricsRange {
  const q = query ?? {};
  const to = q.to === undefined || q.to === null ? now : integer(q.to, "to");
  const from = q.from === undefined || q.from === null ? to - METRICS_RETENTION_MS : integer(q.from, "from");
  if (from < 0 || to < 0) throw new InvalidArgumentError("mqlite: from and to must not be negative");
  if (from > to) throw new InvalidArgumentError("mqlite: from must not be after to");
  if (to - from > METRICS_RETENTION_MS)
    throw new InvalidArgumentError(
      `mqlite: a metrics range spans at most ${METRICS_RETENTION_MS / 86_400_000} days`,
    );
  let queues: string[] | undefined;
  if (q.queues !== undefined && q.queues !== null) {
    if (!Array.isArray(q.queues)) throw new InvalidArgumentError("mqlite: queues must be a list");
    if (q.queues.length > MAX_NAME_LIST)
      throw new InvalidArgumentError(`mqlite: at most ${MAX_NAME_LIST} queues`);
    queues = q.queues.map(String);
  }
  return { from: bucketOf(from), to: bucketOf(to), queues };
}

/** Checks `sendDebounced`'s options. */
export function checkDebounce(options: DebounceOptions): Required<DebounceOptions> {
  if (options === null || typeof options !== "object")
    throw new InvalidArgumentError("mqlite: debounce options are required");
  const { key } = options;
  if (typeof key !== "string" || key.length === 0)
    throw new InvalidArgumentError("mqlite: a debounce key is required");
  if (Buffer.byteLength(key) > MAX_DEBOUNCE_KEY_BYTES)
    throw new InvalidArgumentError(`mqlite: a debounce key is at most ${MAX_DEBOUNCE_KEY_BYTES} bytes`);
  const windowMs = integer(options.windowMs, "window_ms");
  const maxWaitMs = integer(options.maxWaitMs, "max_wait_ms");
  if (windowMs < 1 || windowMs > MAX_DEBOUNCE_MS)
    throw new InvalidArgumentError(`mqlite: window_ms is 1..${MAX_DEBOUNCE_MS}`);
  if (maxWaitMs < windowMs || maxWaitMs > MAX_DEBOUNCE_MS)
    throw new InvalidArgumentError(`mqlite: max_wait_ms is window_ms..${MAX_DEBOUNCE_MS}`);
  return { key, windowMs, maxWaitMs, replaceBody: options.replaceBody === true };
}

/** When a window's message is delivered after a send at `now`. */
export function debounceDeadline(openedAt: number, now: number, d: Required<DebounceOptions>): number {
  return Math.max(now, Math.min(now + d.windowMs, openedAt + d.maxWaitMs));
}
