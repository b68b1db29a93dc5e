import type { QueueStats } from "../contract/types.js";

/**
 * The key of the count of scheduled messages that were delivered before (waiting out an abandon's
 * delay), kept beside the per-state counts by both dialects.
 */
export const BACKING_OFF_KEY = "backing_off";

/** One row of a queue's counts: a state (or `BACKING_OFF_KEY`) and its messages. */
export interface CountRow {
  state: string;
  n: number;
}

/**
 * A queue's `Stats` from its kept counts (one row per state, from either dialect) and the enqueue
 * time of its oldest active or locked message: the one place that says which count is which field.
 */
export function statsFromCounts(
  queue: string,
  rows: readonly CountRow[],
  oldestEnqueuedAt: number | null,
  now: number,
): QueueStats {
  const s: QueueStats = {
    queue,
    active: 0,
    locked: 0,
    deferred: 0,
    scheduled: 0,
    deadLettered: 0,
    completed: 0,
    cancelled: 0,
    backingOff: 0,
    total: 0,
    oldestMessageAgeMs: 0,
  };
  for (const { state, n } of rows) {
    const count = Number(n);
    if (state === BACKING_OFF_KEY) s.backingOff = count;
    else {
      s.total += count;
      if (state === "dead_lettered") s.deadLettered = count;
      else if (state in s) (s as unknown as Record<string, number>)[state] = count;
    }
  }
  if (oldestEnqueuedAt !== null) s.oldestMessageAgeMs = Math.max(0, now - Number(oldestEnqueuedAt));
  return s;
}
