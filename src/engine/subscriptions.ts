import { NameConflictError, NotFoundError } from "../contract/errors.js";
import type { QueueConfig, SubscriptionInfo, SubscriptionKind } from "../contract/types.js";
import type { MessageFilter } from "../filter/index.js";
import type { SqliteDatabase } from "../store/database.js";
import type { QueueRegistry } from "./queue-registry.js";

/** One subscription of a topic, with its filter compiled once. */
export interface Target {
  topic: string;
  name: string;
  kind: SubscriptionKind;
  paused: boolean;
  /** Undefined matches every message. */
  filter: MessageFilter | undefined;
}

interface SubscriptionRow {
  topic: string;
  name: string;
  kind: SubscriptionKind;
  filter: string | null;
  paused: number;
  created_at: number;
}

/**
 * The one subscription table. A topic exists exactly while it has rows here; publishing resolves
 * a name to its targets (ordered by subscription name) through a cache that is dropped on every
 * local change and whenever another connection commits.
 */
export class Subscriptions {
  private readonly cache = new Map<string, Target[] | null>();
  private readonly byTopic;
  private readonly byName;
  private readonly all;
  private readonly upsertRow;
  private readonly deleteRow;
  private readonly setPaused;
  private readonly countRows;

  constructor(
    db: SqliteDatabase,
    private readonly queues: QueueRegistry,
    private readonly compile: (source: string) => MessageFilter,
  ) {
    this.byTopic = db.prepare("SELECT * FROM subscriptions WHERE topic = ? ORDER BY name");
    this.byName = db.prepare("SELECT * FROM subscriptions WHERE name = ? AND kind = 'queue'");
    this.all = db.prepare("SELECT * FROM subscriptions ORDER BY topic, name");
    this.upsertRow = db.prepare(`
      INSERT INTO subscriptions (topic, name, kind, filter, paused, created_at, updated_at)
      VALUES (@topic, @name, @kind, @filter, 0, @now, @now)
      ON CONFLICT (topic, name) DO UPDATE SET filter = excluded.filter, updated_at = excluded.updated_at`);
    this.deleteRow = db.prepare("DELETE FROM subscriptions WHERE topic = ? AND name = ?");
    this.setPaused = db.prepare(
      "UPDATE subscriptions SET paused = ?, updated_at = ? WHERE topic = ? AND name = ?",
    );
    this.countRows = db.prepare("SELECT count(*) AS n FROM subscriptions");
  }

  /** The topic's targets, or undefined when `name` is not a topic. */
  targets(topic: string): Target[] | undefined {
    let targets = this.cache.get(topic);
    if (targets === undefined) {
      const rows = this.byTopic.all(topic) as SubscriptionRow[];
      targets = rows.length === 0 ? null : rows.map((r) => this.toTarget(r));
      this.cache.set(topic, targets);
    }
    return targets ?? undefined;
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
    this.queues.ensureBacking(name, config, now);
    this.upsertRow.run({ topic, name, kind: "queue", filter: filter || null, now });
    this.cache.delete(topic);
  }

  /** Removes a subscription (and, for a queue subscription, its backing queue and messages). */
  unsubscribe(topic: string, name: string): SubscriptionRow {
    const row = this.requireRow(topic, name);
    this.deleteRow.run(topic, name);
    this.cache.delete(topic);
    return row;
  }

  pause(topic: string, name: string, paused: boolean, now: number): void {
    this.requireRow(topic, name);
    this.setPaused.run(paused ? 1 : 0, now, topic, name);
    this.cache.delete(topic);
  }

  list(): SubscriptionInfo[] {
    return (this.all.all() as SubscriptionRow[]).map((r) => {
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

  count(): number {
    return (this.countRows.get() as { n: number }).n;
  }

  invalidate(): void {
    this.cache.clear();
  }

  private requireRow(topic: string, name: string): SubscriptionRow {
    const row = (this.byTopic.all(topic) as SubscriptionRow[]).find((r) => r.name === name);
    if (!row) throw new NotFoundError("mqlite: subscription not found");
    return row;
  }

  private toTarget(r: SubscriptionRow): Target {
    return {
      topic: r.topic,
      name: r.name,
      kind: r.kind,
      paused: r.paused === 1,
      filter: r.filter ? this.compile(r.filter) : undefined,
    };
  }
}
