import { NameConflictError, NotFoundError } from "../contract/errors.js";
import type { QueueConfig, SubscriptionInfo, SubscriptionKind } from "../contract/types.js";
import type { Target } from "../engine/subscriptions.js";
import type { MessageFilter } from "../filter/index.js";
import type { Conn } from "./db.js";
import type { PgQueueRegistry } from "./queue-registry.js";

interface SubscriptionRow {
  topic: string;
  name: string;
  kind: SubscriptionKind;
  filter: string | null;
  paused: number;
  created_at: number;
}

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
    return rows.map((r) => ({
      topic: r.topic,
      name: r.name,
      kind: r.kind,
      paused: r.paused === 1,
      filter: r.filter ? this.filterOf(r.filter) : undefined,
    }));
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
    const rows = await c.q<SubscriptionRow>(
      'SELECT * FROM subscriptions ORDER BY topic COLLATE "C", name COLLATE "C"',
    );
    return rows.map((r) => {
      const info: SubscriptionInfo = {
        topic: r.topic,
        name: r.name,
        kind: r.kind,
        paused: r.paused === 1,
        createdAt: r.created_at,
      };
      if (r.filter) info.filter = r.filter;
      return info;
    });
  }

  async count(c: Conn): Promise<number> {
    const [row] = await c.q<{ n: number }>("SELECT count(*) AS n FROM subscriptions");
    return row?.n ?? 0;
  }
}
