/** What one maintenance pass changed, so the caller can wake waiters and re-arm timers. */
export interface MaintenanceResult {
  /** Queues that gained claimable messages. */
  activated: Set<string>;
  /** Messages that reached a final state (wake `awaitSettled`). */
  settled: number[];
  /** Kept outcomes (completed, cancelled) whose retention lapsed. */
  retainedDropped: number;
  requeued: number;
  deadLettered: number;
  scheduledActivated: number;
  expired: number;
  dedupDropped: number;
  auxDropped: number;
  retentionDropped: number;
}

/** A pass that changed nothing. */
export function emptyResult(): MaintenanceResult {
  return {
    activated: new Set(),
    settled: [],
    retainedDropped: 0,
    requeued: 0,
    deadLettered: 0,
    scheduledActivated: 0,
    expired: 0,
    dedupDropped: 0,
    auxDropped: 0,
    retentionDropped: 0,
  };
}

/** Adds one step's changes to a whole pass's. */
export function mergeResult(into: MaintenanceResult, from: MaintenanceResult): void {
  for (const q of from.activated) into.activated.add(q);
  into.requeued += from.requeued;
  into.deadLettered += from.deadLettered;
  into.scheduledActivated += from.scheduledActivated;
  into.expired += from.expired;
  into.dedupDropped += from.dedupDropped;
  into.auxDropped += from.auxDropped;
  into.retentionDropped += from.retentionDropped;
  into.retainedDropped += from.retainedDropped;
  into.settled.push(...from.settled);
}
