import { NameConflictError, NotFoundError } from "../../contract/errors.js";
import type { QueueConfig, SubscriptionInfo } from "../../contract/types.js";
import {
  type SubscriptionRow,
  subscriptionInfo,
  type Target,
  type TaskSpec,
  taskParams,
} from "../../core/subscription-rows.js";
import type { MessageFilter } from "../../filter/index.js";
import type { SqliteDatabase } from "./database.js";
import type { QueueRegistry } from "./queue-registry.js";

/** The one upsert of a task or log subscription: a re-subscribe keeps pause state, creation time and cursor. */
export const UPSERT_JOB_SUBSCRIPTION = `
  INSERT INTO subscriptions (topic, name, kind, filter, paused, created_at, updated_at, task, target_queue,
    durable, owner, priority, max_deliveries, lock_duration_ms)
  VALUES (@topic, @name, @kind, @filter, 0, @now, @now, @task, @queue, @durable, @owner, @priority,
    @maxDeliveries, @lockDurationMs)
  ON CONFLICT (topic, name) DO UPDATE SET kind = excluded.kind, filter = excluded.filter,
    task = excluded.task, target_queue = excluded.target_queue, durable = excluded.durable,
    owner = excluded.owner, priority = excluded.priority, max_deliveries = excluded.max_deliveries,
    lock_duration_ms = excluded.lock_duration_ms, updated_at = excluded.updated_at`;

/**
 * The one subscription table, for every kind of target: a queue (its backing queue), a task (one
 * job per publish in the task's queue) or a log cursor. A topic exists while it has rows here (or
 * is declared); publishing resolves a name to its targets (ordered by subscription name) through a
 * cache that is dropped on every local change and whenever another connection commits.
 */
export class Subscriptions {
  private readonly cache = new Map<string, Target[] | null>();
  private readonly byTopic;
  private readonly byName;
  private readonly one;
  private readonly all;
  private readonly upsertRow;
  private readonly upsertJobRow;
  private readonly deleteRow;
  private readonly setPaused;
  private readonly countRows;
  private readonly reapRows;
  private readonly countLogSubs;

  constructor(
    db: SqliteDatabase,
    private readonly queues: QueueRegistry,
    private readonly compile: (source: string) => MessageFilter,
  ) {
    this.byTopic = db.prepare("SELECT *, rowid AS position FROM subscriptions WHERE topic = ? ORDER BY name");
    this.byName = db.prepare("SELECT * FROM subscriptions WHERE name = ? AND kind = 'queue'");
    this.one = db.prepare("SELECT * FROM subscriptions WHERE topic = ? AND name = ?");
    this.all = db.prepare("SELECT * FROM subscriptions ORDER BY topic, name");
    this.upsertRow = db.prepare(`
      INSERT INTO subscriptions (topic, name, kind, filter, paused, created_at, updated_at)
      VALUES (@topic, @name, @kind, @filter, 0, @now, @now)
      ON CONFLICT (topic, name) DO UPDATE SET filter = excluded.filter, updated_at = excluded.updated_at`);
    this.upsertJobRow = db.prepare(UPSERT_JOB_SUBSCRIPTION);
    this.deleteRow = db.prepare("DELETE FROM subscriptions WHERE topic = ? AND name = ?");
    this.setPaused = db.prepare(
      "UPDATE subscriptions SET paused = ?, updated_at = ? WHERE topic = ? AND name = ?",
    );
    this.countRows = db.prepare("SELECT count(*) AS n FROM subscriptions");
    this.reapRows = db.prepare(`
      DELETE FROM subscriptions WHERE durable = 0 AND created_at < @graceBefore
        AND (owner IS NULL OR owner NOT IN (SELECT id FROM workers WHERE last_heartbeat > @liveAfter))
      RETURNING topic`);
    this.countLogSubs = db.prepare(
      "SELECT count(*) AS n FROM subscriptions WHERE topic = ? AND kind = 'log'",
    );
  }

  /** The topic's targets, or undefined when it has no subscription. */
  targets(topic: string): Target[] | undefined {
    let targets = this.cache.get(topic);
    if (targets === undefined) {
      const rows = this.byTopic.all(topic) as SubscriptionRow[];
      targets = rows.length === 0 ? null : rows.map((r) => this.toTarget(r));
      this.cache.set(topic, targets);
    }
    return targets ?? undefined;
  }

  /** One subscription row, or undefined. */
  row(topic: string, name: string): SubscriptionRow | undefined {
    return this.one.get(topic, name) as SubscriptionRow | undefined;
  }

  /**
   * Creates or updates a queue subscription inside a write: the namespace checks of the one flat
   * namespace, the backing queue (kept as is on a re-subscribe), and the mapping row.
   */
  subscribeQueue(
    topic: string,
    name: string,
    filter: string,
    config: QueueConfig | undefined,
    now: number,
  ): void {
    if (this.queues.get(topic))
      throw new NameConflictError(`mqlite: topic "${topic}" is the name of a queue`);
    const backing = this.queues.get(name);
    if (backing && backing.kind === "queue") {
      throw new NameConflictError(`mqlite: subscription name "${name}" is the name of a queue`);
    }
    const owner = this.byName.get(name) as SubscriptionRow | undefined;
    if (owner && owner.topic !== topic) {
      throw new NameConflictError(`mqlite: "${name}" is already a subscription of topic "${owner.topic}"`);
    }
    if (this.queues.isLiveTopic(name)) throw new NameConflictError(`mqlite: "${name}" is a topic`);
    const existing = this.row(topic, name);
    if (existing && existing.kind !== "queue") {
      throw new NameConflictError(`mqlite: "${name}" is a ${existing.kind} subscription of "${topic}"`);
    }
    this.queues.ensureBacking(name, config, now);
    this.upsertRow.run({ topic, name, kind: "queue", filter: filter || null, now });
    this.cache.delete(topic);
  }

  /** Creates or updates a task subscription inside a write; its queue is created if missing. */
  subscribeTask(topic: string, name: string, spec: TaskSpec, now: number): void {
    this.checkJobSubscription(topic, name);
    const target = this.queues.get(spec.queue);
    if (target && target.kind !== "queue") {
      throw new NameConflictError(`mqlite: "${spec.queue}" is a subscription's backing queue`);
    }
    if (!target) this.queues.upsert(spec.queue, undefined, now);
    this.upsertJobRow.run(taskParams(topic, name, spec, now));
    this.cache.delete(topic);
  }

  /** Creates a log subscription, or updates its filter, inside a write (its cursor is kept). */
  subscribeLog(topic: string, name: string, filter: string, now: number): void {
    this.checkJobSubscription(topic, name);
    this.upsertJobRow.run({
      topic,
      name,
      kind: "log",
      filter: filter || null,
      task: null,
      queue: null,
      durable: 1,
      owner: null,
      priority: null,
      maxDeliveries: 0,
      lockDurationMs: 0,
      now,
    });
    this.cache.delete(topic);
  }

  private checkJobSubscription(topic: string, name: string): void {
    if (this.queues.get(topic))
      throw new NameConflictError(`mqlite: topic "${topic}" is the name of a queue`);
    const existing = this.row(topic, name);
    if (existing && existing.kind === "queue") {
      throw new NameConflictError(`mqlite: "${name}" is a queue subscription of "${topic}"`);
    }
  }

  /** Removes a subscription. */
  unsubscribe(topic: string, name: string): SubscriptionRow {
    const row = this.requireRow(topic, name);
    this.deleteRow.run(topic, name);
    this.cache.delete(topic);
    return row;
  }

  /** How many log subscriptions a topic has (paused ones included). */
  logSubscriptionCount(topic: string): number {
    return (this.countLogSubs.get(topic) as { n: number }).n;
  }

  /** Deletes ephemeral rows whose owner is not live and that are older than the grace window. */
  reap(liveAfter: number, graceBefore: number): string[] {
    const topics = (this.reapRows.all({ liveAfter, graceBefore }) as { topic: string }[]).map((r) => r.topic);
    for (const t of topics) this.cache.delete(t);
    return topics;
  }

  pause(topic: string, name: string, paused: boolean, now: number): void {
    this.requireRow(topic, name);
    this.setPaused.run(paused ? 1 : 0, now, topic, name);
    this.cache.delete(topic);
  }

  list(): SubscriptionInfo[] {
    return (this.all.all() as SubscriptionRow[]).map(subscriptionInfo);
  }

  rows(): SubscriptionRow[] {
    return this.all.all() as SubscriptionRow[];
  }

  count(): number {
    return (this.countRows.get() as { n: number }).n;
  }

  invalidate(): void {
    this.cache.clear();
  }

  private requireRow(topic: string, name: string): SubscriptionRow {
    const row = this.row(topic, name);
    if (!row) throw new NotFoundError("mqlite: subscription not found");
    return row;
  }

  private toTarget(r: SubscriptionRow): Target {
    const t: Target = {
      topic: r.topic,
      name: r.name,
      kind: r.kind,
      paused: r.paused === 1,
      filter: r.filter ? this.compile(r.filter) : undefined,
      createdAt: r.created_at,
      position: r.position ?? 0,
    };
    if (r.kind === "task") {
      t.task = r.task ?? "";
      t.queue = r.target_queue ?? "";
      t.priority = r.priority;
      t.maxDeliveries = r.max_deliveries;
      t.lockDurationMs = r.lock_duration_ms;
    }
    return t;
  }
}
