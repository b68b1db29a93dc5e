import type { statsToWire } from "./results.js";

// The shapes the console's live feed (`GET /ui-api/events`) pushes.

/** One queue in a console snapshot: counts by state plus this process's cumulative counters. */
export type QueueSnapshot = Omit<ReturnType<typeof statsToWire>, "queue"> & {
  name: string;
  kind: string;
  paused?: boolean;
  /** Messages stored into the queue since the broker opened (absent when the broker does not count). */
  sent_total?: number;
  /** Messages completed in the queue since the broker opened (absent when the broker does not count). */
  completed_total?: number;
};

/** One subscription in a console snapshot. */
export interface SubscriptionSnapshot {
  topic: string;
  name: string;
  kind: string;
  paused: boolean;
  expr?: string;
}

/** The totals of a snapshot, also kept as the stream's recent history. */
export interface SnapshotTotals {
  at_ms: number;
  sent_total: number;
  completed_total: number;
  /** Waiting or in flight: active + locked + deferred + scheduled, over every queue. */
  backlog: number;
  dead_lettered: number;
}

/** What `GET /ui-api/events` pushes every second as `event: snapshot`. */
export interface ConsoleSnapshot {
  at_ms: number;
  uptime_ms: number;
  db_size_bytes: number;
  /** Whether the broker counts sends and completions (the rates are meaningful). */
  counters: boolean;
  queues: QueueSnapshot[];
  subscriptions: SubscriptionSnapshot[];
  totals: SnapshotTotals;
}
