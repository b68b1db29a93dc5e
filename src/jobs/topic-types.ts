import type { TaskHandler, TaskOptions } from "./types.js";

/** Options of `queue.subscriber(topic, taskName, handler, options)`. */
export interface SubscriberOptions extends TaskOptions {
  /** The subscription's stable name; `(topic, subscriptionName)` is its key. Default: the task name. */
  subscriptionName?: string;
  /** The queue the deliveries land in. Default `"default"`. */
  queue?: string;
  /**
   * Default true. An ephemeral subscription (false) is registered only by a running worker, owned
   * by it, and removed once that worker stops heartbeating.
   */
  durable?: boolean;
  /** Our extension: the deliveries' priority when the publish gives none (default: the queue's, 0). */
  priority?: number;
  /** Our extension: an expr filter over the published message (its properties carry metadata and notes). */
  filter?: string;
}

/** Options of `publish`. Durations are ms. */
export interface PublishOptions {
  /** Dedupes per subscriber: salted with the subscription before it becomes a delivery's unique key. */
  idempotencyKey?: string;
  /** Free-form text copied to every delivery and to the log row. */
  metadata?: string;
  /** A plain object; every delivery's notes also carry `topic` and `subscription`. */
  notes?: Record<string, unknown>;
  /** Overrides every delivery's priority. */
  priority?: number;
  /** Deliveries become eligible this long after the publish. */
  delayMs?: number;
  /** Overrides every delivery's retry budget. */
  maxRetries?: number;
  /** Overrides every delivery's per-attempt timeout. */
  timeoutMs?: number;
  /** Deliveries (and the log row) expire this long after the publish. */
  expiresMs?: number;
  /** How long each delivery's result is kept. */
  resultTtlMs?: number;
}

/** A fan-out or log subscription as `listSubscriptions` reports it (log ones: `taskName` "", `queue` "default"). */
export interface Subscription {
  topic: string;
  subscriptionName: string;
  taskName: string;
  queue: string;
  active: boolean;
  durable: boolean;
  /** `"fanout"` (one job per publish) or `"log"` (a cursor over the topic's log). */
  mode: "fanout" | "log";
  /** Our extension: the subscription's filter, when it has one. */
  filter?: string;
}

/** The backlog of one fan-out subscription (`topicStats`). */
export interface TopicStat {
  topic: string;
  subscription: string;
  taskName: string;
  queue: string;
  active: boolean;
  durable: boolean;
  pending: number;
  running: number;
  dead: number;
  /** Age of the oldest pending delivery; absent when nothing is pending. */
  oldestPendingAgeMs?: number;
}

/** A message of a topic's log (`readTopic`, `leaseTopic`). */
export interface TopicMessage {
  /** Opaque and increasing; also the cursor token of `ackTopic`. */
  id: string;
  /** The published arguments. */
  args: unknown[];
  metadata?: string;
  notes?: Record<string, unknown>;
  /** When it was published (epoch ms). */
  createdAt: number;
}

/** The lag of one log subscription (`topicLogStats`). */
export interface TopicLogStat {
  topic: string;
  subscription: string;
  /** The last acknowledged id (absent before the first ack). */
  cursor?: string;
  lag: number;
  oldestUnackedAgeMs?: number;
}

/** A declared topic. */
export interface DeclaredTopic {
  name: string;
  mode: "log";
  /** Absent: kept until consumed. */
  retentionMs?: number;
  createdAt: number;
}

/** Options of `logConsumer`. */
export interface LogConsumerOptions {
  /** Wait after an empty poll (and after a failure in retry mode). Default 1000. */
  pollIntervalMs?: number;
  /** Messages per poll. Default 100. */
  batchSize?: number;
  /**
   * `"retry"` (default): a failing message stays un-acked and its batch is read again after the poll
   * interval (those before it are acked). `"skip"`: the failure is logged and the cursor moves past it.
   */
  onError?: "retry" | "skip";
}

/** A managed log consumer's handler: the published arguments, spread. */
export type LogHandler = TaskHandler;
