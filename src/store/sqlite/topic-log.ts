import type {
  EngineDeclaredTopic,
  EngineTopicLogStat,
  TopicLogMessage,
} from "../../contract/topic-service.js";
import { AnswerBudget } from "../../core/answer-budget.js";
import {
  FILTERED_READ_BATCH,
  logFilterMessage,
  type TopicMessageRow,
  topicMessage,
} from "../../core/fanout.js";
import type { PreparedMessage } from "../../core/outgoing.js";
import type { SubscriptionRow } from "../../core/subscription-rows.js";
import type { MessageFilter } from "../../filter/index.js";
import type { SqliteDatabase } from "./database.js";
import type { SequenceNumbers } from "./sequence-numbers.js";

interface DeclaredRow {
  name: string;
  retention_ms: number | null;
  created_at: number;
}

const LIVE = "(expires_at = 0 OR expires_at > @now)";

/**
 * The topic log, declared topics and per-message leases, inside the caller's transaction. One row
 * per publish whatever the number of log subscriptions; compaction deletes what every log
 * subscription consumed (expired rows first, then up to the slowest cursor, then messages every
 * per-message consumer acknowledged).
 */
export class TopicLog {
  private readonly declaredCache = new Map<string, DeclaredRow | null>();
  private readonly selectDeclared;
  private readonly upsertDeclared;
  private readonly allDeclared;
  private readonly insertRow;
  private readonly readRows;
  private readonly leaseRows;
  private readonly upsertDelivery;
  private readonly ackRow;
  private readonly nackRow;
  private readonly dropSubDeliveries;
  private readonly dropTopicRows;
  private readonly dropTopicDeliveries;
  private readonly expiredRows;
  private readonly dropDeliveriesOf;
  private readonly cursorFloors;
  private readonly compactBelow;
  private readonly perMessageTopics;
  private readonly compactAcked;
  private readonly lagOf;
  private readonly markSkipped;

  constructor(
    db: SqliteDatabase,
    private readonly ids: SequenceNumbers,
  ) {
    this.selectDeclared = db.prepare("SELECT * FROM topics WHERE name = ?");
    this.upsertDeclared = db.prepare(`
      INSERT INTO topics (name, retention_ms, created_at, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (name) DO UPDATE SET retention_ms = excluded.retention_ms, updated_at = excluded.updated_at`);
    this.allDeclared = db.prepare("SELECT * FROM topics ORDER BY name");
    this.insertRow = db.prepare(`
      INSERT INTO topic_messages (id, topic, created_at, expires_at, message_id, correlation_id, content_type, subject,
        properties, body)
      VALUES (@id, @topic, @now, @expiresAt, @messageId, @correlationId, @contentType, @subject, @propertiesJson, @body)`);
    this.readRows = db.prepare(
      `SELECT * FROM topic_messages WHERE topic = @topic AND id > @after AND ${LIVE} ORDER BY id LIMIT @limit`,
    );
    this.leaseRows = db.prepare(`
      SELECT m.*, coalesce(d.attempts, 0) AS attempts FROM topic_messages m
      LEFT JOIN topic_deliveries d ON d.topic = m.topic AND d.subscription = @name AND d.message_id = m.id
      WHERE m.topic = @topic AND m.id > @after AND (m.expires_at = 0 OR m.expires_at > @now)
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
    this.ackRow = db.prepare(
      "UPDATE topic_deliveries SET acked = 1 WHERE topic = ? AND subscription = ? AND message_id = ? AND acked = 0",
    );
    this.nackRow = db.prepare(
      "UPDATE topic_deliveries SET lease_expires_at = 0 WHERE topic = ? AND subscription = ? AND message_id = ? AND acked = 0",
    );
    this.dropSubDeliveries = db.prepare("DELETE FROM topic_deliveries WHERE topic = ? AND subscription = ?");
    this.dropTopicRows = db.prepare("DELETE FROM topic_messages WHERE topic = ?");
    this.dropTopicDeliveries = db.prepare("DELETE FROM topic_deliveries WHERE topic = ?");
    this.expiredRows = db.prepare(`
      DELETE FROM topic_messages WHERE id IN (
        SELECT id FROM topic_messages WHERE expires_at > 0 AND expires_at <= ? LIMIT ?)
      RETURNING id`);
    this.dropDeliveriesOf = db.prepare("DELETE FROM topic_deliveries WHERE message_id = ?");
    this.cursorFloors = db.prepare(`
      SELECT topic, min(cursor) AS floor FROM subscriptions WHERE kind = 'log'
      GROUP BY topic HAVING count(*) = count(cursor)`);
    this.compactBelow = db.prepare(`
      DELETE FROM topic_messages WHERE id IN (
        SELECT id FROM topic_messages WHERE topic = ? AND id <= ? ORDER BY id LIMIT ?)
      RETURNING id`);
    // Topics whose every log subscription consumes per message (each has delivery rows).
    this.perMessageTopics = db.prepare(`
      SELECT s.topic, count(*) AS subs FROM subscriptions s WHERE s.kind = 'log'
      GROUP BY s.topic
      HAVING count(*) = sum(EXISTS (SELECT 1 FROM topic_deliveries d WHERE d.topic = s.topic AND d.subscription = s.name))`);
    this.compactAcked = db.prepare(`
      DELETE FROM topic_messages WHERE id IN (
        SELECT m.id FROM topic_messages m WHERE m.topic = @topic
          AND (SELECT count(*) FROM topic_deliveries d WHERE d.topic = m.topic AND d.message_id = m.id AND d.acked = 1
               AND d.subscription IN (SELECT name FROM subscriptions WHERE topic = m.topic AND kind = 'log')) >= @subs
        ORDER BY m.id LIMIT @limit)
      RETURNING id`);
    this.lagOf = db.prepare(
      `SELECT count(*) AS n, min(created_at) AS oldest FROM topic_messages WHERE topic = @topic AND id > @after AND ${LIVE}`,
    );
  }

  // --- declared topics --------------------------------------------------------------------------

  declared(name: string): DeclaredRow | undefined {
    let row = this.declaredCache.get(name);
    if (row === undefined) {
      row = (this.selectDeclared.get(name) as DeclaredRow | undefined) ?? null;
      this.declaredCache.set(name, row);
    }
    return row ?? undefined;
  }

  declare(name: string, retentionMs: number | null, now: number): void {
    this.upsertDeclared.run(name, retentionMs, now, now);
    this.declaredCache.delete(name);
  }

  listDeclared(): EngineDeclaredTopic[] {
    return (this.allDeclared.all() as DeclaredRow[]).map((r) => {
      const d: EngineDeclaredTopic = { name: r.name, createdAt: r.created_at };
      if (r.retention_ms !== null) d.retentionMs = r.retention_ms;
      return d;
    });
  }

  invalidate(): void {
    this.declaredCache.clear();
  }

  // --- the log ----------------------------------------------------------------------------------

  append(topic: string, m: PreparedMessage, now: number, expiresAt: number): number {
    const id = this.ids.take(1);
    this.insertRow.run({
      id,
      topic,
      now,
      expiresAt,
      messageId: m.messageId,
      correlationId: m.correlationId,
      contentType: m.contentType,
      subject: m.subject,
      propertiesJson: m.propertiesJson,
      body: m.body,
    });
    return id;
  }

  /** The messages after `cursor` that the filter matches, oldest first. */
  read(
    topic: string,
    cursor: number | null,
    limit: number,
    now: number,
    filter: MessageFilter | undefined,
  ): TopicLogMessage[] {
    const after = cursor ?? 0;
    const budget = new AnswerBudget();
    if (!filter || filter.matchesAll) {
      const out: TopicLogMessage[] = [];
      for (const r of this.readRows.iterate({ topic, after, limit, now }) as Iterable<TopicMessageRow>) {
        out.push(topicMessage(r));
        if (!budget.add(r)) break;
      }
      return out;
    }
    const out: TopicLogMessage[] = [];
    let from = after;
    for (;;) {
      const rows = this.readRows.all({
        topic,
        after: from,
        limit: FILTERED_READ_BATCH,
        now,
      }) as TopicMessageRow[];
      for (const r of rows) {
        if (filter.matches(logFilterMessage(r))) {
          out.push(topicMessage(r));
          if (!budget.add(r)) return out;
        }
        if (out.length >= limit) return out;
      }
      if (rows.length < FILTERED_READ_BATCH) return out;
      from = rows[rows.length - 1]!.id;
    }
  }

  /** Leases up to `limit` available messages (never leased, or whose lease lapsed or was nacked). */
  lease(
    topic: string,
    name: string,
    limit: number,
    visibilityMs: number,
    now: number,
    filter: MessageFilter | undefined,
  ): TopicLogMessage[] {
    const out: TopicLogMessage[] = [];
    const budget = new AnswerBudget();
    let after = 0;
    for (;;) {
      const rows = this.leaseRows.all({
        topic,
        name,
        after,
        now,
        limit: FILTERED_READ_BATCH,
      }) as TopicMessageRow[];
      for (const r of rows) {
        if (filter && !filter.matchesAll && !filter.matches(logFilterMessage(r))) {
          // Not for this subscription: settled at once, so per-message compaction can drop it.
          this.markSkipped.run({ topic, name, id: r.id, now });
          continue;
        }
        this.upsertDelivery.run({ topic, name, id: r.id, until: now + visibilityMs, now });
        out.push(topicMessage({ ...r, attempts: (r.attempts ?? 0) + 1 }));
        if (out.length >= limit || !budget.add(r)) return out;
      }
      if (rows.length < FILTERED_READ_BATCH) return out;
      after = rows[rows.length - 1]!.id;
    }
  }

  ackMessage(topic: string, name: string, id: number): boolean {
    return this.ackRow.run(topic, name, id).changes > 0;
  }

  nackMessage(topic: string, name: string, id: number): boolean {
    return this.nackRow.run(topic, name, id).changes > 0;
  }

  /** Forgets a log subscription's leases. */
  dropSubscription(topic: string, name: string): void {
    this.dropSubDeliveries.run(topic, name);
  }

  /** Deletes a topic's whole log (its last log subscription left and it is not declared). */
  dropTopic(topic: string): void {
    this.dropTopicRows.run(topic);
    this.dropTopicDeliveries.run(topic);
  }

  logStats(subs: SubscriptionRow[], now: number): EngineTopicLogStat[] {
    return subs.map((s) => {
      const r = this.lagOf.get({ topic: s.topic, after: s.cursor ?? 0, now }) as {
        n: number;
        oldest: number | null;
      };
      const stat: EngineTopicLogStat = { topic: s.topic, subscription: s.name, lag: r.n };
      if (s.cursor !== null) stat.cursor = s.cursor;
      if (r.oldest !== null) stat.oldestUnackedAt = r.oldest;
      return stat;
    });
  }

  /**
   * One compaction pass of at most `budget` rows: expired rows first, then (per topic whose every
   * log subscription has a cursor) everything up to the slowest cursor, then (per topic consumed
   * per message) every message all of its log subscriptions acknowledged. Deliveries go with their
   * messages. Returns how many rows were deleted.
   */
  compact(now: number, budget: number): number {
    let left = budget;
    const drop = (ids: { id: number }[]) => {
      for (const { id } of ids) this.dropDeliveriesOf.run(id);
      left -= ids.length;
    };
    drop(this.expiredRows.all(now, left) as { id: number }[]);
    for (const f of this.cursorFloors.all() as { topic: string; floor: number }[]) {
      if (left <= 0) break;
      drop(this.compactBelow.all(f.topic, f.floor, left) as { id: number }[]);
    }
    for (const t of this.perMessageTopics.all() as { topic: string; subs: number }[]) {
      if (left <= 0) break;
      drop(this.compactAcked.all({ topic: t.topic, subs: t.subs, limit: left }) as { id: number }[]);
    }
    return budget - left;
  }
}
