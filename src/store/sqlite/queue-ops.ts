import type { QueueRow } from "../../core/queue-config.js";
import type { CountRow } from "../../core/queue-counts.js";
import type { JobSubscription, SubscriptionRow } from "../../core/subscription-rows.js";
import type { DeliveryCount } from "../../core/topic-stats.js";
import type { NormalizedQueueConfig, QueueOps } from "../../core/verbs/queues.js";
import type { SubscriptionKey } from "../../core/verbs/subscriptions.js";
import type { SqliteDatabase } from "./database.js";
import type { QueueRegistry } from "./queue-registry.js";
import type { Subscriptions } from "./subscriptions.js";
import type { TopicLog } from "./topic-log.js";

/** The one upsert of a task or log subscription: a re-subscribe keeps pause state, creation time and cursor. */
const UPSERT_JOB_SUBSCRIPTION = `
  INSERT INTO subscriptions (topic, name, kind, filter, paused, created_at, updated_at, task, target_queue,
    durable, owner, priority, max_deliveries, lock_duration_ms)
  VALUES (@topic, @name, @kind, @filter, 0, @now, @now, @task, @queue, @durable, @owner, @priority,
    @maxDeliveries, @lockDurationMs)
  ON CONFLICT (topic, name) DO UPDATE SET kind = excluded.kind, filter = excluded.filter,
    task = excluded.task, target_queue = excluded.target_queue, durable = excluded.durable,
    owner = excluded.owner, priority = excluded.priority, max_deliveries = excluded.max_deliveries,
    lock_duration_ms = excluded.lock_duration_ms, updated_at = excluded.updated_at`;

/** Task subscriptions' deliveries grouped by subscription and state (`?`: one topic). */
const deliveryCounts = (where: string) => `
  SELECT topic, subscription, state, count(*) AS n, min(enqueued_at) AS oldest FROM messages
  WHERE ${where} GROUP BY topic, subscription, state`;

/**
 * The statements of queues and subscriptions on SQLite (the rules are in core/verbs/queues.ts and
 * subscriptions.ts). Every change drops what the registry and the subscriptions cache of it.
 */
export class SqliteQueueOps implements QueueOps {
  private readonly deleteQueue;
  private readonly deleteSome;
  private readonly clearQueueAux;
  private readonly statsRows;
  private readonly oldestRow;
  private readonly pausedRow;
  private readonly byName;
  private readonly upsertQueueSubscription;
  private readonly upsertJobSubscription;
  private readonly deleteSub;
  private readonly pausedSub;
  private readonly allDeliveryCounts;
  private readonly topicDeliveryCounts;
  private readonly reapRows;

  constructor(
    db: SqliteDatabase,
    private readonly registry: QueueRegistry,
    private readonly subs: Subscriptions,
    private readonly topicLog: TopicLog,
  ) {
    this.deleteQueue = db.prepare("DELETE FROM queues WHERE name = ?");
    this.deleteSome = db.prepare(
      "DELETE FROM messages WHERE id IN (SELECT id FROM messages INDEXED BY idx_msg_queue_state WHERE queue = ? LIMIT ?)",
    );
    this.clearQueueAux = [
      db.prepare("DELETE FROM dedup WHERE queue = ?"),
      db.prepare("DELETE FROM settlement_receipts WHERE queue = ?"),
      db.prepare("DELETE FROM receive_attempts WHERE queue = ?"),
    ];
    // Counts are kept in the writing transactions (migrations 9 and 12): a few rows, whatever the backlog. The oldest live
    // message is the first by sequence in each of the two states: sequence numbers follow send
    // time, so that is MIN(enqueued_at) in two index seeks instead of a read of every row.
    this.statsRows = db.prepare("SELECT state, n FROM queue_counts WHERE queue = ?");
    const firstIn = (state: string) =>
      `SELECT * FROM (SELECT enqueued_at FROM messages INDEXED BY idx_msg_queue_state
        WHERE queue = ? AND state = '${state}' ORDER BY id LIMIT 1)`;
    this.oldestRow = db.prepare(
      `SELECT min(enqueued_at) AS oldest FROM (${firstIn("active")} UNION ALL ${firstIn("locked")})`,
    );
    this.pausedRow = db.prepare("UPDATE queues SET paused = ?, updated_at = ? WHERE name = ?");
    this.byName = db.prepare("SELECT * FROM subscriptions WHERE name = ? AND kind = 'queue'");
    this.upsertQueueSubscription = db.prepare(`
      INSERT INTO subscriptions (topic, name, kind, filter, paused, created_at, updated_at)
      VALUES (@topic, @name, 'queue', @filter, 0, @now, @now)
      ON CONFLICT (topic, name) DO UPDATE SET filter = excluded.filter, updated_at = excluded.updated_at`);
    this.upsertJobSubscription = db.prepare(UPSERT_JOB_SUBSCRIPTION);
    this.deleteSub = db.prepare("DELETE FROM subscriptions WHERE topic = ? AND name = ? RETURNING *");
    this.pausedSub = db.prepare(
      "UPDATE subscriptions SET paused = ?, updated_at = ? WHERE topic = ? AND name = ?",
    );
    this.allDeliveryCounts = db.prepare(deliveryCounts("topic IS NOT NULL"));
    this.topicDeliveryCounts = db.prepare(deliveryCounts("topic = ?"));
    this.reapRows = db.prepare(`
      DELETE FROM subscriptions WHERE durable = 0 AND created_at < @graceBefore
        AND (owner IS NULL OR owner NOT IN (SELECT id FROM workers WHERE last_heartbeat > @liveAfter))
      RETURNING topic`);
  }

  /** The writer runs one write at a time: nothing to serialise. */
  lockNamespace(): void {}

  queue(name: string): QueueRow | undefined {
    return this.registry.get(name);
  }

  isTopic(name: string): boolean {
    return this.registry.isLiveTopic(name);
  }

  saveQueue(a: { name: string; config: NormalizedQueueConfig; now: number }): void {
    this.registry.save(a.name, a.config, a.now);
  }

  deleteMessages(a: { queue: string; limit: number }): number {
    return this.deleteSome.run(a.queue, a.limit).changes;
  }

  /** Its messages go with the row (ON DELETE CASCADE). */
  dropQueue(name: string): void {
    this.registry.forget(name);
    this.deleteQueue.run(name);
    for (const stmt of this.clearQueueAux) stmt.run(name);
  }

  queues(): QueueRow[] {
    return this.registry.rows();
  }

  counts(queue: string): { rows: CountRow[]; oldest: number | null } {
    const { oldest } = this.oldestRow.get(queue, queue) as { oldest: number | null };
    return { rows: this.statsRows.all(queue) as CountRow[], oldest };
  }

  setQueuePaused(a: { name: string; paused: boolean; now: number }): boolean {
    const changed = this.pausedRow.run(a.paused ? 1 : 0, a.now, a.name).changes > 0;
    this.registry.forget(a.name);
    return changed;
  }

  subscription(a: SubscriptionKey): SubscriptionRow | undefined {
    return this.subs.row(a.topic, a.name);
  }

  queueSubscriptionNamed(name: string): SubscriptionRow | undefined {
    return this.byName.get(name) as SubscriptionRow | undefined;
  }

  saveQueueSubscription(a: SubscriptionKey & { filter: string | null; now: number }): void {
    this.upsertQueueSubscription.run(a);
    this.subs.forget(a.topic);
  }

  saveJobSubscription(a: JobSubscription): void {
    this.upsertJobSubscription.run(a);
    this.subs.forget(a.topic);
  }

  deleteSubscription(a: SubscriptionKey): SubscriptionRow | undefined {
    const row = this.deleteSub.get(a.topic, a.name) as SubscriptionRow | undefined;
    this.subs.forget(a.topic);
    return row;
  }

  setSubscriptionPaused(a: SubscriptionKey & { paused: boolean; now: number }): boolean {
    const changed = this.pausedSub.run(a.paused ? 1 : 0, a.now, a.topic, a.name).changes > 0;
    this.subs.forget(a.topic);
    return changed;
  }

  subscriptions(): SubscriptionRow[] {
    return this.subs.rows();
  }

  deliveryCounts(topic: string | undefined): DeliveryCount[] {
    return (
      topic === undefined ? this.allDeliveryCounts.all() : this.topicDeliveryCounts.all(topic)
    ) as DeliveryCount[];
  }

  reapSubscriptions(a: { liveAfter: number; graceBefore: number }): number {
    const rows = this.reapRows.all(a) as { topic: string }[];
    for (const r of rows) this.subs.forget(r.topic);
    return rows.length;
  }

  dropLogDeliveries(a: SubscriptionKey): void {
    this.topicLog.dropSubscription(a.topic, a.name);
  }

  logSubscriptionCount(topic: string): number {
    return this.subs.logSubscriptionCount(topic);
  }

  isDeclared(topic: string): boolean {
    return this.topicLog.declared(topic) !== undefined;
  }

  dropTopicLog(topic: string): void {
    this.topicLog.dropTopic(topic);
  }
}
