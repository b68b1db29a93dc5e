import type { BrokerStatus, QueueStats, SubscriptionInfo } from "../../contract/types.js";

// The contract's results under their wire names (the JSON a served broker answers), for
// `--output json` and the MCP tools.

/** MetricsResponse (the Stats RPC). */
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

/** StatusResponse. */
export function statusToWire(s: BrokerStatus) {
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
    auth: s.auth,
  };
}

/** A ListSubscriptions entry (`expr` absent means match-all). */
export function subscriptionToWire(s: SubscriptionInfo) {
  return {
    topic: s.topic,
    name: s.name,
    ...(s.filter && { expr: s.filter }),
    kind: s.kind,
    paused: s.paused,
    ...(s.createdAt && { created_at_ms: s.createdAt }),
  };
}
