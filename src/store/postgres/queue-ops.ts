import type { Async } from "../../core/port.js";
import type { QueueRow } from "../../core/queue-config.js";
import type { CountRow } from "../../core/queue-counts.js";
import type { JobSubscription, SubscriptionRow } from "../../core/subscription-rows.js";
import type { DeliveryCount } from "../../core/topic-stats.js";
import type { NormalizedQueueConfig, QueueOps } from "../../core/verbs/queues.js";
import type { SubscriptionKey } from "../../core/verbs/subscriptions.js";
import type { Conn } from "./db.js";
import { lockAll, xactLockKey } from "./locks.js";
import { pgName } from "./names.js";
import type { PgQueueRegistry } from "./queue-registry.js";
import type { PgSubscriptions } from "./subscriptions.js";
import type { PgTopicLog } from "./topic-log.js";

/** What the queue statements share across connections: the schema and the per-node caches. */
export interface PgQueueContext {
  schema: string;
  queues: PgQueueRegistry;
  subscriptions: PgSubscriptions;
  topicLog: PgTopicLog;
}

/** Its messages go with the row (ON DELETE CASCADE); what is kept of them goes in the same statement. */
const DROP_QUEUE = `
  WITH d AS (DELETE FROM dedup WHERE queue = $1),
  r AS (DELETE FROM settlement_receipts WHERE queue = $1),
  a AS (DELETE FROM receive_attempts WHERE queue = $1)
  DELETE FROM queues WHERE name = $1`;

/** Some of a queue's messages (a step of dropping it). */
const DELETE_SOME = `
  WITH d AS (DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE queue = $1 LIMIT $2) RETURNING 1)
  SELECT count(*)::int AS n FROM d`;

/** A queue's kept counts (migration 4): the folded ones plus the deltas not folded yet, in one snapshot. */
const STATS = `
  SELECT state, sum(n)::bigint AS n FROM (
    SELECT state, n FROM queue_counts WHERE queue = $1
    UNION ALL
    SELECT state, n FROM queue_count_deltas WHERE queue = $1
  ) c GROUP BY state`;

/** The oldest active or locked message: the first by sequence in each state, two index seeks. */
const OLDEST = `
  SELECT least(
    (SELECT enqueued_at FROM messages WHERE queue = $1 AND state = 'active' ORDER BY id LIMIT 1),
    (SELECT enqueued_at FROM messages WHERE queue = $1 AND state = 'locked' ORDER BY id LIMIT 1)
  ) AS oldest`;

/** The one upsert of a task or log subscription (keeps pause state, creation time and cursor). */
const UPSERT_JOB = `
  INSERT INTO subscriptions (topic, name, kind, filter, paused, created_at, updated_at, task, target_queue,
    durable, owner, priority, max_deliveries, lock_duration_ms)
  VALUES ($1, $2, $3, $4, 0, $5, $5, $6, $7, $8, $9, $10, $11, $12)
  ON CONFLICT (topic, name) DO UPDATE SET kind = excluded.kind, filter = excluded.filter,
    task = excluded.task, target_queue = excluded.target_queue, durable = excluded.durable,
    owner = excluded.owner, priority = excluded.priority, max_deliveries = excluded.max_deliveries,
    lock_duration_ms = excluded.lock_duration_ms, updated_at = excluded.updated_at`;

const REAP = `
  DELETE FROM subscriptions WHERE durable = 0 AND created_at < $2
    AND (owner IS NULL OR owner NOT IN (SELECT id FROM workers WHERE last_heartbeat > $1))
  RETURNING 1`;

const DELIVERY_COUNTS = `
  SELECT topic, subscription, state, count(*)::int AS n, min(enqueued_at) AS oldest FROM messages
  WHERE topic IS NOT NULL AND ($1::text IS NULL OR topic = $1) GROUP BY topic, subscription, state`;

/**
 * The statements of queues and subscriptions on PostgreSQL, on one connection (the rules are in
 * core/verbs/queues.ts and subscriptions.ts). Names are looked up through `pgName`.
 */
export class PgQueueOps implements Async<QueueOps> {
  constructor(
    private readonly c: Conn,
    private readonly ctx: PgQueueContext,
  ) {}

  /** Nodes write concurrently: the namespace's checks and changes take its advisory lock. */
  lockNamespace(): Promise<void> {
    return lockAll(this.c, [xactLockKey(this.ctx.schema, "namespace")]);
  }

  /** Reads the row (and refreshes the node's cache). */
  queue(name: string): Promise<QueueRow | undefined> {
    return this.ctx.queues.get(this.c, pgName(name));
  }

  isTopic(name: string): Promise<boolean> {
    return this.ctx.queues.isLiveTopic(this.c, pgName(name));
  }

  saveQueue(a: { name: string; config: NormalizedQueueConfig; now: number }): Promise<void> {
    return this.ctx.queues.save(this.c, a.name, a.config, a.now);
  }

  async deleteMessages(a: { queue: string; limit: number }): Promise<number> {
    const [row] = await this.c.q<{ n: number }>(DELETE_SOME, [pgName(a.queue), a.limit]);
    return row!.n;
  }

  async dropQueue(name: string): Promise<void> {
    const n = pgName(name);
    this.ctx.queues.forgetAfter(this.c, n);
    await this.c.q(DROP_QUEUE, [n]);
  }

  queues(): Promise<QueueRow[]> {
    return this.ctx.queues.rows(this.c);
  }

  async counts(queue: string): Promise<{ rows: CountRow[]; oldest: number | null }> {
    const n = pgName(queue);
    const rows = await this.c.q<CountRow>(STATS, [n]);
    const [row] = await this.c.q<{ oldest: number | null }>(OLDEST, [n]);
    return { rows, oldest: row?.oldest ?? null };
  }

  /** A new config version, so that cached copies are refreshed. */
  async setQueuePaused(a: { name: string; paused: boolean; now: number }): Promise<boolean> {
    const n = pgName(a.name);
    const rows = await this.c.q(
      "UPDATE queues SET paused = $1, updated_at = $2, version = nextval('config_version') WHERE name = $3 RETURNING 1",
      [a.paused ? 1 : 0, a.now, n],
    );
    this.ctx.queues.forgetAfter(this.c, n);
    return rows.length > 0;
  }

  subscription(a: SubscriptionKey): Promise<SubscriptionRow | undefined> {
    return this.ctx.subscriptions.row(this.c, pgName(a.topic), pgName(a.name));
  }

  async queueSubscriptionNamed(name: string): Promise<SubscriptionRow | undefined> {
    const [row] = await this.c.q<SubscriptionRow>(
      "SELECT * FROM subscriptions WHERE name = $1 AND kind = 'queue'",
      [pgName(name)],
    );
    return row;
  }

  async saveQueueSubscription(a: SubscriptionKey & { filter: string | null; now: number }): Promise<void> {
    await this.c.q(
      `INSERT INTO subscriptions (topic, name, kind, filter, paused, created_at, updated_at)
       VALUES ($1, $2, 'queue', $3, 0, $4, $4)
       ON CONFLICT (topic, name) DO UPDATE SET filter = excluded.filter, updated_at = excluded.updated_at`,
      [a.topic, a.name, a.filter, a.now],
    );
  }

  async saveJobSubscription(a: JobSubscription): Promise<void> {
    await this.c.q(UPSERT_JOB, [
      a.topic,
      a.name,
      a.kind,
      a.filter,
      a.now,
      a.task,
      a.queue,
      a.durable,
      a.owner,
      a.priority,
      a.maxDeliveries,
      a.lockDurationMs,
    ]);
  }

  async deleteSubscription(a: SubscriptionKey): Promise<SubscriptionRow | undefined> {
    const [row] = await this.c.q<SubscriptionRow>(
      "DELETE FROM subscriptions WHERE topic = $1 AND name = $2 RETURNING *",
      [pgName(a.topic), pgName(a.name)],
    );
    return row;
  }

  async setSubscriptionPaused(a: SubscriptionKey & { paused: boolean; now: number }): Promise<boolean> {
    const rows = await this.c.q(
      "UPDATE subscriptions SET paused = $1, updated_at = $2 WHERE topic = $3 AND name = $4 RETURNING 1",
      [a.paused ? 1 : 0, a.now, pgName(a.topic), pgName(a.name)],
    );
    return rows.length > 0;
  }

  subscriptions(): Promise<SubscriptionRow[]> {
    return this.ctx.subscriptions.rows(this.c);
  }

  deliveryCounts(topic: string | undefined): Promise<DeliveryCount[]> {
    return this.c.q<DeliveryCount>(DELIVERY_COUNTS, [topic === undefined ? null : pgName(topic)]);
  }

  async reapSubscriptions(a: { liveAfter: number; graceBefore: number }): Promise<number> {
    return (await this.c.q(REAP, [a.liveAfter, a.graceBefore])).length;
  }

  dropLogDeliveries(a: SubscriptionKey): Promise<void> {
    return this.ctx.topicLog.dropSubscription(this.c, pgName(a.topic), pgName(a.name));
  }

  logSubscriptionCount(topic: string): Promise<number> {
    return this.ctx.subscriptions.logSubscriptionCount(this.c, pgName(topic));
  }

  isDeclared(topic: string): Promise<boolean> {
    return this.ctx.topicLog.isDeclared(this.c, pgName(topic));
  }

  dropTopicLog(topic: string): Promise<void> {
    return this.ctx.topicLog.dropTopic(this.c, pgName(topic));
  }
}
