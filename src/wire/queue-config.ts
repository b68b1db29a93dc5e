import { z } from "zod";
import type { OrderingMode, QueueConfig, QueueInfo, QueueKind } from "../contract/types.js";
import { bool, int, str } from "./primitives.js";

/** `QueueConfigJSON`: a queue's configuration on the wire. Omitted fields take their defaults. */
export const WireQueueConfig = z
  .strictObject({
    kind: str().meta({ description: '"" or "queue", or "subscription".' }),
    lock_duration_ms: int(),
    max_delivery_count: int(),
    default_ttl_ms: int(),
    dead_letter_on_expire: bool().meta({ description: "Absent or null means true." }),
    dedup_window_ms: int(),
    ordering_mode: str().meta({ description: '"", "standard", "group_fifo" or "strict_fifo".' }),
    dlq_max_age_ms: int(),
    dlq_max_count: int(),
    dlq_max_bytes: int(),
  })
  .meta({ id: "QueueConfig" });
export type WireQueueConfig = z.input<typeof WireQueueConfig>;

/**
 * A ListQueues entry. The original's fields (name, kind, lock, max delivery, default TTL, dedup
 * window) come first; the rest of the config follows as our extension. Every field is present.
 */
export const WireQueueInfo = z
  .strictObject({
    name: z.string(),
    kind: z.string(),
    lock_duration_ms: z.int(),
    max_delivery_count: z.int(),
    default_ttl_ms: z.int(),
    dedup_window_ms: z.int(),
    ordering_mode: z.string().optional(),
    dead_letter_on_expire: z.boolean().optional(),
    dlq_max_age_ms: z.int().optional(),
    dlq_max_count: z.int().optional(),
    dlq_max_bytes: z.int().optional(),
    paused: z.boolean().optional().meta({ description: "Extension: present (true) while paused." }),
  })
  .meta({ id: "QueueInfo" });
export type WireQueueInfo = z.input<typeof WireQueueInfo>;

/** Drops unset keys so the engine applies its defaults. */
function defined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

export function queueConfigFromWire(w: WireQueueConfig | null | undefined): QueueConfig | undefined {
  if (!w) return undefined;
  return defined({
    kind: (w.kind || undefined) as QueueKind | undefined,
    lockDurationMs: w.lock_duration_ms ?? undefined,
    maxDeliveryCount: w.max_delivery_count ?? undefined,
    defaultTtlMs: w.default_ttl_ms ?? undefined,
    deadLetterOnExpire: w.dead_letter_on_expire ?? undefined,
    dedupWindowMs: w.dedup_window_ms ?? undefined,
    orderingMode: (w.ordering_mode || undefined) as OrderingMode | undefined,
    dlqMaxAgeMs: w.dlq_max_age_ms ?? undefined,
    dlqMaxCount: w.dlq_max_count ?? undefined,
    dlqMaxBytes: w.dlq_max_bytes ?? undefined,
  });
}

export function queueConfigToWire(c: QueueConfig | undefined): WireQueueConfig | undefined {
  if (!c) return undefined;
  return defined({
    kind: c.kind,
    lock_duration_ms: c.lockDurationMs,
    max_delivery_count: c.maxDeliveryCount,
    default_ttl_ms: c.defaultTtlMs,
    dead_letter_on_expire: c.deadLetterOnExpire,
    dedup_window_ms: c.dedupWindowMs,
    ordering_mode: c.orderingMode,
    dlq_max_age_ms: c.dlqMaxAgeMs,
    dlq_max_count: c.dlqMaxCount,
    dlq_max_bytes: c.dlqMaxBytes,
  });
}

export function queueInfoToWire(q: QueueInfo): WireQueueInfo {
  return {
    name: q.name,
    kind: q.kind,
    lock_duration_ms: q.lockDurationMs,
    max_delivery_count: q.maxDeliveryCount,
    default_ttl_ms: q.defaultTtlMs,
    dedup_window_ms: q.dedupWindowMs,
    ordering_mode: q.orderingMode,
    dead_letter_on_expire: q.deadLetterOnExpire,
    dlq_max_age_ms: q.dlqMaxAgeMs,
    dlq_max_count: q.dlqMaxCount,
    dlq_max_bytes: q.dlqMaxBytes,
    ...(q.paused && { paused: true }),
  };
}

/** A ListQueues entry read back; a server without the extension fields gets their defaults. */
export function queueInfoFromWire(w: WireQueueInfo): QueueInfo {
  return {
    name: w.name,
    kind: w.kind as QueueKind,
    lockDurationMs: w.lock_duration_ms,
    maxDeliveryCount: w.max_delivery_count,
    defaultTtlMs: w.default_ttl_ms,
    dedupWindowMs: w.dedup_window_ms,
    orderingMode: (w.ordering_mode || "standard") as OrderingMode,
    deadLetterOnExpire: w.dead_letter_on_expire ?? true,
    dlqMaxAgeMs: w.dlq_max_age_ms ?? 0,
    dlqMaxCount: w.dlq_max_count ?? 0,
    dlqMaxBytes: w.dlq_max_bytes ?? 0,
    ...(w.paused && { paused: true }),
  };
}
