import type { BrokerStatus, QueueStats, SubscriptionInfo } from "../contract/types.js";

// The contract's results under their wire names: what a served broker answers, what `--output json`
// prints and what the MCP tools return — one conversion for all of them.

/** MetricsResponse (the Stats RPC): every field always present. */
export function statsToWire(s: QueueStats) {
  return {
    queue: s.queue,
    active: s.active,
    locked: s.locked,
    deferred: s.deferred,
    scheduled: s.scheduled,
    dead_lettered: s.deadLettered,
    completed: s.completed,
    cancelled: s.cancelled,
    backing_off: s.backingOff,
    total: s.total,
    oldest_message_age_ms: s.oldestMessageAgeMs,
  };
}

/** StatusResponse. `auth` is the server's to say: the broker does not know whether tokens are checked. */
export function statusToWire(s: BrokerStatus, auth = s.auth) {
  return {
    version: s.version,
    backend: s.backend,
    remote: s.remote,
    location: s.location,
    schema_version: s.schemaVersion,
    ping_ms: s.pingMs,
    db_size_bytes: s.dbSizeBytes,
    queues: s.queues,
    subscriptions: s.subscriptions,
    uptime_ms: s.uptimeMs,
    auth,
    ...(s.synchronous && { sync: s.synchronous }),
  };
}

/** A ListSubscriptions entry (`expr` absent means match-all; task and log fields only for those kinds). */
export function subscriptionToWire(s: SubscriptionInfo) {
  return {
    topic: s.topic,
    name: s.name,
    ...(s.filter && { expr: s.filter }),
    kind: s.kind,
    paused: s.paused,
    ...(s.createdAt && { created_at_ms: s.createdAt }),
    ...(s.task !== undefined && { task: s.task }),
    ...(s.queue !== undefined && { queue: s.queue }),
    ...(s.durable !== undefined && { durable: s.durable }),
    ...(s.owner !== undefined && { owner: s.owner }),
    ...(s.priority !== undefined && { priority: s.priority }),
    ...(s.maxDeliveryCount !== undefined && { max_delivery_count: s.maxDeliveryCount }),
    ...(s.lockDurationMs !== undefined && { lock_duration_ms: s.lockDurationMs }),
    ...(s.cursor !== undefined && { cursor: s.cursor }),
  };
}
