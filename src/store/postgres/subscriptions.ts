import type { MessageFilter } from "../../core/filters.js";
import { type SubscriptionRow, type Target, targetOf } from "../../core/subscription-rows.js";
import type { Conn } from "./db.js";

/** Compiled filters are pure functions of their source: cached by source, never stale. */
const MAX_COMPILED = 10_000;

/**
 * The one subscription table on PostgreSQL. A topic exists exactly while it has rows here. Rows are
 * read in the transaction that uses them (no cross-node cache); only compiled filters are cached.
 * The writes of the subscription verbs are in `PgQueueOps`.
 */
export class PgSubscriptions {
  private readonly compiled = new Map<string, MessageFilter>();

  constructor(private readonly compile: (source: string) => MessageFilter) {}

  /** The topic's targets ordered by subscription name, or undefined when `topic` is not a topic. */
  async targets(c: Conn, topic: string): Promise<Target[] | undefined> {
    const rows = await c.q<SubscriptionRow>(
      'SELECT * FROM subscriptions WHERE topic = $1 ORDER BY name COLLATE "C"',
      [topic],
    );
    if (rows.length === 0) return undefined;
    return rows.map((r) => targetOf(r, (source) => this.filterOf(source)));
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

  async logSubscriptionCount(c: Conn, topic: string): Promise<number> {
    const [r] = await c.q<{ n: number }>(
      "SELECT count(*)::int AS n FROM subscriptions WHERE topic = $1 AND kind = 'log'",
      [topic],
    );
    return r?.n ?? 0;
  }

  async rows(c: Conn): Promise<SubscriptionRow[]> {
    return c.q<SubscriptionRow>('SELECT * FROM subscriptions ORDER BY topic COLLATE "C", name COLLATE "C"');
  }

  async count(c: Conn): Promise<number> {
    const [row] = await c.q<{ n: number }>("SELECT count(*) AS n FROM subscriptions");
    return row?.n ?? 0;
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
}
