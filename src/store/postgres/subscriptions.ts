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
import type { Conn } from "./db.js";
import type { PgQueueRegistry } from "./queue-registry.js";

/** The one upsert of a task or log subscription (keeps pause state, creation time and cursor). */
const UPSERT_JOB = `
  INSERT INTO subscriptions (topic, name, kind, filter, paused, created_at, updated_at, task, target_queue,
    durable, owner, priority, max_deliveries, lock_duration_ms)
  VALUES ($1, $2, $3, $4, 0, $5, $5, $6, $7, $8, $9, $10, $11, $12)
  ON CONFLICT (topic, name) DO UPDATE SET kind = excluded.kind, filter = excluded.filter,
    task = excluded.task, target_queue = excluded.target_queue, durable = excluded.durable,
    owner = excluded.owner, priority = excluded.priority, max_deliveries = excluded.max_deliveries,
    lock_duration_ms = excluded.lock_duration_ms, updated_at = excluded.updated_at`;

/** Compiled filters are pure functions of their source: cached by source, never stale. */
const MAX_COMPILED = 10_000;

/**
 * The one subscription table on PostgreSQL. A topic exists exactly while it has rows here. Rows are
 * read in the transaction that uses them (no cross-node cache); only compiled filters are cached.
 */
export class PgSubscriptions {
  private readonly compiled = new Map<string, MessageFilter>();

  constructor(
    private readonly queues: PgQueueRegistry,
    private readonly compile: (source: string) => MessageFilter,
  ) {}

  /** The topic's targets ordered by subscription name, or undefined when `topic` is not a topic. */
  async targets(c: Conn, topic: string): Promise<Target[] | undefined> {
    const rows = await c.q<SubscriptionRow>(
      'SELECT * FROM subscriptions WHERE topic = $1 ORDER BY name COLLATE "C"',
      [topic],
    );
    if (rows.length === 0) return undefined;
    return rows.map((r) => {
      const t: Target = {
        topic: r.topic,
        name: r.name,
        kind: r.kind,
        paused: r.paused === 1,
        filter: r.filter ? this.filterOf(r.filter) : undefined,
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
    });
  }

  /** The compiled filter of one subscription (undefined: match-all). */
  filterFor(row: SubscriptionRow): MessageFilter | undefined {
    return row.filter ? this.filterOf(row.filter) : undefined;
  }

  async row(c: Conn, topic: string, name: string): Promise<SubscriptionRow | undefined> {
    const [row] = await c.q<SubscriptionRow>("SELECT * FROM subscriptions WHERE topic = $1 AND name = $2", [
      topic,
      name,
    ]);
    return row;
  }

  private async checkJobSubscription(c: Conn, topic: string, name: string): Promise<void> {
    if ((await c.q("SELECT 1 FROM queues WHERE name = $1", [topic])).length > 0) {
      throw new NameConflictError(`mqlite: topic "${topic}" is the name of a queue`);
    }
    const existing = await this.row(c, topic, name);
    if (existing && existing.kind === "queue") {
      throw new NameConflictError(`mqlite: "${name}" is a queue subscription of "${topic}"`);
    }
  }

  /** Creates or updates a task subscription (inside a transaction holding the namespace lock). */
  async subscribeTask(c: Conn, topic: string, name: string, spec: TaskSpec, now: number): Promise<void> {
    await this.checkJobSubscription(c, topic, name);
    const [target] = await c.q<{ kind: string }>("SELECT kind FROM queues WHERE name = $1", [spec.queue]);
    if (target && target.kind !== "queue") {
      throw new NameConflictError(`mqlite: "${spec.queue}" is a subscription's backing queue`);
    }
    if (!target) await this.queues.upsert(c, spec.queue, undefined, now);
    const p = taskParams(topic, name, spec, now);
    await c.q(UPSERT_JOB, [
      topic,
      name,
      "task",
      p.filter,
      now,
      p.task,
      p.queue,
      p.durable,
      p.owner,
      p.priority,
      p.maxDeliveries,
      p.lockDurationMs,
    ]);
  }

  /** Creates a log subscription or updates its filter (inside a transaction holding the namespace lock). */
  async subscribeLog(c: Conn, topic: string, name: string, filter: string, now: number): Promise<void> {
    await this.checkJobSubscription(c, topic, name);
    await c.q(UPSERT_JOB, [topic, name, "log", filter || null, now, null, null, 1, null, null, 0, 0]);
  }

  async logSubscriptionCount(c: Conn, topic: string): Promise<number> {
    const [r] = await c.q<{ n: number }>(
      "SELECT count(*)::int AS n FROM subscriptions WHERE topic = $1 AND kind = 'log'",
      [topic],
    );
    return r?.n ?? 0;
  }

  /** Deletes ephemeral rows whose owner is not live and that are older than the grace window. */
  async reap(c: Conn, liveAfter: number, graceBefore: number): Promise<number> {
    const rows = await c.q(
      `DELETE FROM subscriptions WHERE durable = 0 AND created_at < $2
         AND (owner IS NULL OR owner NOT IN (SELECT id FROM workers WHERE last_heartbeat > $1))
       RETURNING 1`,
      [liveAfter, graceBefore],
    );
    return rows.length;
  }

  async rows(c: Conn): Promise<SubscriptionRow[]> {
    return c.q<SubscriptionRow>('SELECT * FROM subscriptions ORDER BY topic COLLATE "C", name COLLATE "C"');
  }

  private filterOf(source: string): MessageFilter {
    let f = this.compiled.get(source);
    if (!f) {
      f = this.compile(source);
      if (this.compiled.size >= MAX_COMPILED) this.compiled.clear();
      this.compiled.set(source, f);
    }
    return f;
  }

  /** Creates or updates a queue subscription (inside a transaction holding the namespace lock). */
  async subscribeQueue(
    c: Conn,
    topic: string,
    name: string,
    filter: string,
    config: QueueConfig | undefined,
    now: number,
  ): Promise<void> {
    if ((await c.q("SELECT 1 FROM queues WHERE name = $1", [topic])).length > 0) {
      throw new NameConflictError(`mqlite: topic "${topic}" is the name of a queue`);
    }
    const [backing] = await c.q<{ kind: string }>("SELECT kind FROM queues WHERE name = $1", [name]);
    if (backing && backing.kind === "queue") {
      throw new NameConflictError(`mqlite: subscription name "${name}" is the name of a queue`);
    }
    const [owner] = await c.q<SubscriptionRow>(
      "SELECT * FROM subscriptions WHERE name = $1 AND kind = 'queue'",
      [name],
    );
    if (owner && owner.topic !== topic) {
      throw new NameConflictError(`mqlite: "${name}" is already a subscription of topic "${owner.topic}"`);
    }
    if (await this.queues.isLiveTopic(c, name)) throw new NameConflictError(`mqlite: "${name}" is a topic`);
    const existing = await this.row(c, topic, name);
    if (existing && existing.kind !== "queue") {
      throw new NameConflictError(`mqlite: "${name}" is a ${existing.kind} subscription of "${topic}"`);
    }
    await this.queues.ensureBacking(c, name, config, now);
    await c.q(
      `INSERT INTO subscriptions (topic, name, kind, filter, paused, created_at, updated_at)
       VALUES ($1, $2, 'queue', $3, 0, $4, $4)
       ON CONFLICT (topic, name) DO UPDATE SET filter = excluded.filter, updated_at = excluded.updated_at`,
      [topic, name, filter || null, now],
    );
  }

  /** Removes a subscription row and returns it. */
  async unsubscribe(c: Conn, topic: string, name: string): Promise<SubscriptionRow> {
    const [row] = await c.q<SubscriptionRow>(
      "DELETE FROM subscriptions WHERE topic = $1 AND name = $2 RETURNING *",
      [topic, name],
    );
    if (!row) throw new NotFoundError("mqlite: subscription not found");
    return row;
  }

  async pause(c: Conn, topic: string, name: string, paused: boolean, now: number): Promise<void> {
    const rows = await c.q(
      "UPDATE subscriptions SET paused = $1, updated_at = $2 WHERE topic = $3 AND name = $4 RETURNING 1",
      [paused ? 1 : 0, now, topic, name],
    );
    if (rows.length === 0) throw new NotFoundError("mqlite: subscription not found");
  }

  async list(c: Conn): Promise<SubscriptionInfo[]> {
    return (await this.rows(c)).map(subscriptionInfo);
  }

  async count(c: Conn): Promise<number> {
    const [row] = await c.q<{ n: number }>("SELECT count(*) AS n FROM subscriptions");
    return row?.n ?? 0;
  }
}
