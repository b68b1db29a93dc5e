import type { MessageFilter } from "../../core/filters.js";
import { type SubscriptionRow, type Target, targetOf } from "../../core/subscription-rows.js";
import type { SqliteDatabase } from "./database.js";

/**
 * The one subscription table, for every kind of target: a queue (its backing queue), a task (one
 * job per publish in the task's queue) or a log cursor. A topic exists while it has rows here (or
 * is declared); publishing resolves a name to its targets (ordered by subscription name) through a
 * cache that is dropped on every local change (`forget`) and whenever another connection commits.
 * The writes of the subscription verbs are in `SqliteQueueOps`.
 */
export class Subscriptions {
  private readonly cache = new Map<string, Target[] | null>();
  private readonly byTopic;
  private readonly one;
  private readonly all;
  private readonly countRows;
  private readonly countLogSubs;

  constructor(
    db: SqliteDatabase,
    private readonly compile: (source: string) => MessageFilter,
  ) {
    this.byTopic = db.prepare("SELECT *, rowid AS position FROM subscriptions WHERE topic = ? ORDER BY name");
    this.one = db.prepare("SELECT * FROM subscriptions WHERE topic = ? AND name = ?");
    this.all = db.prepare("SELECT * FROM subscriptions ORDER BY topic, name");
    this.countRows = db.prepare("SELECT count(*) AS n FROM subscriptions");
    this.countLogSubs = db.prepare(
      "SELECT count(*) AS n FROM subscriptions WHERE topic = ? AND kind = 'log'",
    );
  }

  /** The topic's targets, or undefined when it has no subscription. */
  targets(topic: string): Target[] | undefined {
    let targets = this.cache.get(topic);
    if (targets === undefined) {
      const rows = this.byTopic.all(topic) as SubscriptionRow[];
      targets = rows.length === 0 ? null : rows.map((r) => targetOf(r, this.compile));
      this.cache.set(topic, targets);
    }
    return targets ?? undefined;
  }

  /** One subscription row, or undefined. */
  row(topic: string, name: string): SubscriptionRow | undefined {
    return this.one.get(topic, name) as SubscriptionRow | undefined;
  }

  /** How many log subscriptions a topic has (paused ones included). */
  logSubscriptionCount(topic: string): number {
    return (this.countLogSubs.get(topic) as { n: number }).n;
  }

  rows(): SubscriptionRow[] {
    return this.all.all() as SubscriptionRow[];
  }

  count(): number {
    return (this.countRows.get() as { n: number }).n;
  }

  /** Forgets the cached targets of a topic whose subscriptions this write changes. */
  forget(topic: string): void {
    this.cache.delete(topic);
  }

  invalidate(): void {
    this.cache.clear();
  }
}
