import { rowBytes } from "../../core/answer-budget.js";
import type { TopicMessageRow } from "../../core/fanout.js";
import type {
  DeclaredRow,
  LeaseGrant,
  LogLag,
  LogRead,
  LogRef,
  LogSubscription,
  TopicOps,
} from "../../core/verbs/topics.js";
import type { SqliteDatabase } from "./database.js";
import type { QueueRegistry } from "./queue-registry.js";
import type { Subscriptions } from "./subscriptions.js";
import type { TopicLog } from "./topic-log.js";

const LIVE = "(m.expires_at = 0 OR m.expires_at > @now)";

/** The topics statements on SQLite (the rules are in core/verbs/topics.ts). */
export class SqliteTopicOps implements TopicOps {
  private readonly allDeclared;
  private readonly readRows;
  private readonly leaseRows;
  private readonly upsertDelivery;
  private readonly markSkipped;
  private readonly setCursor;
  private readonly ackRow;
  private readonly nackRow;
  private readonly lagRows;

  constructor(
    db: SqliteDatabase,
    private readonly log: TopicLog,
    private readonly queues: QueueRegistry,
    private readonly subscriptions: Subscriptions,
  ) {
    this.allDeclared = db.prepare(
      "SELECT name, retention_ms AS retentionMs, created_at AS createdAt FROM topics ORDER BY name",
    );
    this.readRows = db.prepare(
      `SELECT * FROM topic_messages m WHERE topic = @topic AND id > @after AND ${LIVE} ORDER BY id LIMIT @limit`,
    );
    this.leaseRows = db.prepare(`
      SELECT m.*, coalesce(d.attempts, 0) AS attempts FROM topic_messages m
      LEFT JOIN topic_deliveries d ON d.topic = m.topic AND d.subscription = @name AND d.message_id = m.id
      WHERE m.topic = @topic AND m.id > @after AND ${LIVE}
        AND (d.message_id IS NULL OR (d.acked = 0 AND d.lease_expires_at <= @now))
      ORDER BY m.id LIMIT @limit`);
    this.upsertDelivery = db.prepare(`
      INSERT INTO topic_deliveries (topic, subscription, message_id, acked, attempts, lease_expires_at, delivered_at)
      VALUES (@topic, @name, @id, 0, 1, @until, @now)
      ON CONFLICT (topic, subscription, message_id) DO UPDATE SET attempts = attempts + 1,
        lease_expires_at = excluded.lease_expires_at, delivered_at = excluded.delivered_at`);
    this.markSkipped = db.prepare(`
      INSERT INTO topic_deliveries (topic, subscription, message_id, acked, attempts, lease_expires_at, delivered_at)
      VALUES (@topic, @name, @id, 1, 0, 0, @now) ON CONFLICT DO NOTHING`);
    this.setCursor = db.prepare(`
      UPDATE subscriptions SET cursor = @id WHERE topic = @topic AND name = @name AND kind = 'log'
        AND (cursor IS NULL OR cursor < @id)`);
    this.ackRow = db.prepare(
      "UPDATE topic_deliveries SET acked = 1 WHERE topic = @topic AND subscription = @name AND message_id = @id AND acked = 0",
    );
    this.nackRow = db.prepare(
      "UPDATE topic_deliveries SET lease_expires_at = 0 WHERE topic = @topic AND subscription = @name AND message_id = @id AND acked = 0",
    );
    this.lagRows = db.prepare(`
      SELECT s.topic, s.name AS subscription, s.cursor, count(m.id) AS lag, min(m.created_at) AS oldest
      FROM subscriptions s
      LEFT JOIN topic_messages m ON m.topic = s.topic AND m.id > coalesce(s.cursor, 0) AND ${LIVE}
      WHERE s.kind = 'log' AND (@topic IS NULL OR s.topic = @topic)
      GROUP BY s.topic, s.name ORDER BY s.topic, s.name`);
  }

  declare(a: { name: string; retentionMs: number | null; now: number }): boolean {
    if (this.queues.get(a.name)) return false;
    this.log.declare(a.name, a.retentionMs, a.now);
    return true;
  }

  declared(): DeclaredRow[] {
    return this.allDeclared.all() as DeclaredRow[];
  }

  logSubscription(a: { topic: string; name: string }): LogSubscription | undefined {
    const row = this.subscriptions.row(a.topic, a.name);
    if (row?.kind !== "log") return undefined;
    // The topic's targets hold the compiled filters (cached across calls).
    const target = this.subscriptions.targets(a.topic)?.find((t) => t.name === a.name);
    return { cursor: row.cursor, filter: target?.filter };
  }

  rows(a: LogRead & { maxBytes?: number }): TopicMessageRow[] {
    const { topic, after, now, limit } = a;
    if (a.maxBytes === undefined) return this.readRows.all({ topic, after, now, limit }) as TopicMessageRow[];
    const out: TopicMessageRow[] = [];
    let bytes = 0;
    // Iterated, so that a budget reached early stops the reading of large rows.
    for (const r of this.readRows.iterate({ topic, after, now, limit }) as Iterable<TopicMessageRow>) {
      out.push(r);
      bytes += rowBytes(r);
      if (bytes >= a.maxBytes) break;
    }
    return out;
  }

  leasable(a: LogRead & { name: string }): TopicMessageRow[] {
    const { topic, name, after, now, limit } = a;
    return this.leaseRows.all({ topic, name, after, now, limit }) as TopicMessageRow[];
  }

  lease(a: LeaseGrant): void {
    const { topic, name, now, until } = a;
    for (const id of a.skipped) this.markSkipped.run({ topic, name, id, now });
    for (const id of a.leased) this.upsertDelivery.run({ topic, name, id, until, now });
  }

  moveCursor(a: LogRef): boolean {
    return this.setCursor.run(a).changes > 0;
  }

  ack(a: LogRef): boolean {
    return this.ackRow.run(a).changes > 0;
  }

  nack(a: LogRef): boolean {
    return this.nackRow.run(a).changes > 0;
  }

  lags(a: { topic: string | undefined; now: number }): LogLag[] {
    return this.lagRows.all({ topic: a.topic ?? null, now: a.now }) as LogLag[];
  }
}
