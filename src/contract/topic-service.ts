import type { MaxBytes, OutgoingMessage, SendOptions, SubscriptionKind } from "./types.js";

/**
 * Job topics: the `task` and `log` kinds of the one subscription table, the topic log, declared
 * topics and per-message leases. Part of every `Broker` (embedded, remote or PostgreSQL).
 *
 * A topic is one name of the flat namespace. It exists while it has subscriptions of any kind, or
 * is declared. A publish (this `publish`, or a `send` to the topic) fans out in one transaction: one
 * copy per matching queue subscription, one job per matching task subscription, and one row in
 * the topic's log when it has an active log subscription or is declared.
 */

/** Options of `subscribeTask`: a task subscription's target and delivery settings. */
export interface TaskSubscribeOptions {
  /** The task: each delivery is a message of `queue` whose subject is this. */
  task: string;
  /** The queue the deliveries land in (a plain queue, created if missing). */
  queue: string;
  /** An expr boolean over the published message; empty or absent matches every message. */
  filter?: string;
  /**
   * Default true. An ephemeral subscription (false) belongs to the worker `owner` and is removed by
   * `reapSubscriptions` once that worker stopped heartbeating.
   */
  durable?: boolean;
  /** The worker that owns an ephemeral subscription (required when `durable` is false). */
  owner?: string;
  /** The deliveries' priority when the publish sets none. */
  priority?: number;
  /** The deliveries' delivery limit when the publish sets none (0/absent: the queue's). */
  maxDeliveryCount?: number;
  /** The deliveries' lease when the publish sets none (0/absent: the queue's). */
  lockDurationMs?: number;
}

/** Options of `subscribeLog`. */
export interface LogSubscribeOptions {
  /** An expr boolean: reads and leases of this subscription skip the messages it does not match. */
  filter?: string;
}

/** A task or log subscription with everything the table holds of it (`listSubscriptions` carries these too). */
export interface SubscriptionDetails {
  /** Task subscriptions: the task and its queue. */
  task?: string;
  queue?: string;
  /** False for an ephemeral subscription (task kind only). */
  durable?: boolean;
  /** The worker owning an ephemeral subscription. */
  owner?: string;
  priority?: number;
  maxDeliveryCount?: number;
  lockDurationMs?: number;
  /** Log subscriptions: the id of the last acknowledged log message (absent before the first ack). */
  cursor?: number;
}

/** What one publish did. */
export interface PublishResult {
  /** The copies and jobs stored (or, for a unique key, the live ones returned), in subscription creation order. */
  deliveries: Delivery[];
  /** The id of the topic-log row, when one was stored. */
  logId?: number;
}

/** One copy of a publish: a queue subscription's copy or a task subscription's job. */
export interface Delivery {
  subscription: string;
  kind: Exclude<SubscriptionKind, "log">;
  /** The queue it is in. */
  queue: string;
  seqNumber: number;
  /** True when a live message with the same (salted) unique key was returned instead of a new one. */
  duplicate?: boolean;
}

/** A message of a topic's log, as the broker's `readTopic` and `leaseTopic` return it (the job face's `TopicMessage` decodes it). */
export interface TopicLogMessage {
  /** The log id: increasing with publish order; also the cursor token of `ackTopic`. */
  id: number;
  topic: string;
  body: Buffer;
  messageId?: string;
  correlationId?: string;
  contentType?: string;
  subject?: string;
  properties?: Record<string, string>;
  /** When it was published. */
  enqueuedAt: number;
  /** When the log drops it (absent: kept until every log subscription consumed it). */
  expiresAt?: number;
  /** `leaseTopic` only: how many times this subscription leased it. */
  attempts?: number;
}

/** Options of `readTopic`. */
export interface ReadTopicOptions {
  /** 1..1000, default 100 (≤0 reads nothing). */
  limit?: number;
  /** Our extension: the answer's byte budget (see `MaxBytes`). */
  maxBytes?: MaxBytes;
}

/** Options of `leaseTopic`. */
export interface LeaseTopicOptions {
  /** 1..1000, default 100 (≤0 leases nothing). */
  limit?: number;
  /** How long a leased message is skipped by this subscription's later leases. Default 30000 ms. */
  visibilityMs?: number;
  /** Our extension: the answer's byte budget (see `MaxBytes`). */
  maxBytes?: MaxBytes;
}

/** Options of `declareTopic`. */
export interface DeclareTopicOptions {
  /**
   * How long a publish made while the topic has no active log subscription is kept (ms). Absent:
   * until a log subscription consumes it.
   */
  retentionMs?: number;
}

/** A declared topic, as the broker lists it (the job face's `DeclaredTopic` is its view). */
export interface EngineDeclaredTopic {
  name: string;
  retentionMs?: number;
  createdAt: number;
}

/** The backlog of one task subscription (`topicStats`). */
export interface TopicBacklog {
  topic: string;
  subscription: string;
  task: string;
  queue: string;
  paused: boolean;
  durable: boolean;
  /** Waiting deliveries (active, scheduled or deferred). */
  pending: number;
  /** Locked deliveries. */
  running: number;
  /** Dead-lettered deliveries. */
  dead: number;
  /** When the oldest pending delivery was published (absent when none is pending). */
  oldestPendingAt?: number;
}

/** The lag of one log subscription, as the broker reports it (the job face's `TopicLogStat` is its view). */
export interface EngineTopicLogStat {
  topic: string;
  subscription: string;
  cursor?: number;
  /** Stored messages after the cursor. */
  lag: number;
  /** When the oldest of those was published (absent when caught up). */
  oldestUnackedAt?: number;
}

/** Options of `reapSubscriptions`. */
export interface ReapOptions {
  /** A worker is live while its last heartbeat is newer than this. Default 30000 ms. */
  livenessMs?: number;
  /** Subscriptions younger than this are spared (their worker may not have heartbeaten yet). Default 60000 ms. */
  graceMs?: number;
}

/** Job topics (see the file comment). Every method is async. */
export interface TopicService {
  /**
   * Creates or updates a task subscription. A re-subscribe updates its target, filter and settings in
   * place and keeps its pause state and creation time.
   */
  subscribeTask(topic: string, name: string, options: TaskSubscribeOptions): Promise<void>;
  /** Creates a log subscription (a named cursor), or updates its filter (keeping its cursor). */
  subscribeLog(topic: string, name: string, options?: LogSubscribeOptions): Promise<void>;
  /**
   * Publishes one message to a topic: the same fan-out as `send`, returning every copy. A topic with
   * no subscription that is not declared is `not_found`, as for `send`.
   */
  publish(topic: string, message: OutgoingMessage, options?: SendOptions): Promise<PublishResult>;
  /** Declares a topic (idempotent: a re-declare updates its retention and keeps its creation time). */
  declareTopic(name: string, options?: DeclareTopicOptions): Promise<void>;
  /** Declared topics, by name. */
  listDeclaredTopics(): Promise<EngineDeclaredTopic[]>;
  /**
   * The log messages after a log subscription's cursor, oldest first (a read moves nothing: reading
   * again returns them again). Anything but a log subscription reads nothing.
   */
  readTopic(topic: string, name: string, options?: ReadTopicOptions): Promise<TopicLogMessage[]>;
  /** Moves a log subscription's cursor up to `id` (inclusive). False when it is already there or beyond. */
  ackTopic(topic: string, name: string, id: number): Promise<boolean>;
  /** Leases log messages one by one: each is skipped by this subscription's later leases while leased. */
  leaseTopic(topic: string, name: string, options?: LeaseTopicOptions): Promise<TopicLogMessage[]>;
  /** Acknowledges a leased message. False when it is not leased (never leased, or already acknowledged). */
  ackMessage(topic: string, name: string, id: number): Promise<boolean>;
  /** Gives a leased message back at once. False when it is not leased. */
  nackMessage(topic: string, name: string, id: number): Promise<boolean>;
  /** The backlog of every task subscription (of one topic), by topic then name. */
  topicStats(topic?: string): Promise<TopicBacklog[]>;
  /** The lag of every log subscription (of one topic), by topic then name. */
  topicLogStats(topic?: string): Promise<EngineTopicLogStat[]>;
  /** Removes ephemeral subscriptions whose owner stopped heartbeating. Returns how many. */
  reapSubscriptions(options?: ReapOptions): Promise<number>;
}
