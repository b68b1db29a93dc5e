import { InvalidArgumentError } from "../contract/errors.js";
import type { OrderingMode, QueueConfig, QueueInfo, QueueKind } from "../contract/types.js";
import { duration, integer } from "./validate.js";

/** A `queues` row. */
export interface QueueRow {
  name: string;
  kind: QueueKind;
  lock_duration_ms: number;
  max_delivery_count: number;
  default_ttl_ms: number;
  dead_letter_on_expire: number;
  dedup_window_ms: number;
  ordering_mode: OrderingMode;
  dlq_max_age_ms: number;
  dlq_max_count: number;
  dlq_max_bytes: number;
  /** 1 while paused (`pauseQueue`): nothing is claimed. */
  paused: number;
  created_at: number;
  updated_at: number;
}

export const DEFAULT_LOCK_DURATION_MS = 30_000;
export const DEFAULT_MAX_DELIVERY_COUNT = 10;

const kinds: readonly QueueKind[] = ["queue", "subscription"];
const orderings: readonly OrderingMode[] = ["standard", "group_fifo", "strict_fifo"];

/** A DLQ bound: 0 inherits, >0 is the queue's own, <0 (stored as -1) is unbounded. */
function dlqBound(value: unknown, field: string): number {
  const n = integer(value, field);
  return n < 0 ? -1 : n;
}

/** Applies the defaults and normalisations of a queue config, refusing values that make no sense. */
export function normalizeQueueConfig(config: QueueConfig = {}): Required<QueueConfig> {
  const kind = (config.kind || "queue") as QueueKind;
  if (!kinds.includes(kind)) throw new InvalidArgumentError(`mqlite: unknown queue kind "${config.kind}"`);
  const orderingMode = (config.orderingMode || "standard") as OrderingMode;
  if (!orderings.includes(orderingMode)) {
    throw new InvalidArgumentError(`mqlite: unknown ordering_mode "${config.orderingMode}"`);
  }
  if (config.deadLetterOnExpire !== undefined && config.deadLetterOnExpire !== null) {
    if (typeof config.deadLetterOnExpire !== "boolean") {
      throw new InvalidArgumentError("mqlite: dead_letter_on_expire must be a boolean");
    }
  }
  const lock = duration(config.lockDurationMs, "lock_duration_ms");
  const maxDelivery = integer(config.maxDeliveryCount, "max_delivery_count", 0, 1_000_000_000);
  const ttl = duration(config.defaultTtlMs, "default_ttl_ms");
  const dedup = duration(config.dedupWindowMs, "dedup_window_ms");
  return {
    kind,
    lockDurationMs: lock > 0 ? lock : DEFAULT_LOCK_DURATION_MS,
    maxDeliveryCount: maxDelivery > 0 ? maxDelivery : DEFAULT_MAX_DELIVERY_COUNT,
    defaultTtlMs: Math.max(ttl, 0),
    deadLetterOnExpire: config.deadLetterOnExpire ?? true,
    dedupWindowMs: Math.max(dedup, 0),
    orderingMode,
    dlqMaxAgeMs: dlqBound(config.dlqMaxAgeMs, "dlq_max_age_ms"),
    dlqMaxCount: dlqBound(config.dlqMaxCount, "dlq_max_count"),
    dlqMaxBytes: dlqBound(config.dlqMaxBytes, "dlq_max_bytes"),
  };
}

export function queueInfoFromRow(row: QueueRow): QueueInfo {
  return {
    name: row.name,
    kind: row.kind,
    lockDurationMs: row.lock_duration_ms,
    maxDeliveryCount: row.max_delivery_count,
    defaultTtlMs: row.default_ttl_ms,
    deadLetterOnExpire: row.dead_letter_on_expire === 1,
    dedupWindowMs: row.dedup_window_ms,
    orderingMode: row.ordering_mode,
    dlqMaxAgeMs: row.dlq_max_age_ms,
    dlqMaxCount: row.dlq_max_count,
    dlqMaxBytes: row.dlq_max_bytes,
    ...(row.paused ? { paused: true } : {}),
  };
}
