import type { PreparedMessage } from "../../core/outgoing.js";
import type { SqliteDatabase } from "./database.js";
import type { SequenceNumbers } from "./sequence-numbers.js";

interface DeclaredRow {
  name: string;
  retention_ms: number | null;
  created_at: number;
}

/**
 * The topic log's appends, declared topics (cached for publish) and compaction, inside the caller's
 * transaction; reads, leases and acknowledgements are `SqliteTopicOps`. One row per publish
 * whatever the number of log subscriptions; compaction deletes what every log subscription
 * consumed (expired rows first, then up to the slowest cursor, then messages every per-message
 * consumer acknowledged).
 */
export class TopicLog {
  private readonly declaredCache = new Map<string, DeclaredRow | null>();
  private readonly selectDeclared;
  private readonly upsertDeclared;
  private readonly insertRow;
  private readonly dropSubDeliveries;
  private readonly dropTopicRows;
  private readonly dropTopicDeliveries;
  private readonly expiredRows;
  private readonly dropDeliveriesOf;
  private readonly cursorFloors;
  private readonly compactBelow;
  private readonly perMessageTopics;
  private readonly compactAcked;

  constructor(
    db: SqliteDatabase,
    private readonly ids: SequenceNumbers,
  ) {
    this.selectDeclared = db.prepare("SELECT * FROM topics WHERE name = ?");
    this.upsertDeclared = db.prepare(`
      INSERT INTO topics (name, retention_ms, created_at, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (name) DO UPDATE SET retention_ms = excluded.retention_ms, updated_at = excluded.updated_at`);
    this.insertRow = db.prepare(`
      INSERT INTO topic_messages (id, topic, created_at, expires_at, message_id, correlation_id, content_type, subject,
        properties, body)
      VALUES (@id, @topic, @now, @expiresAt, @messageId, @correlationId, @contentType, @subject, @propertiesJson, @body)`);
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

  /** Forgets a log subscription's leases. */
  dropSubscription(topic: string, name: string): void {
    this.dropSubDeliveries.run(topic, name);
  }

  /** Deletes a topic's whole log (its last log subscription left and it is not declared). */
  dropTopic(topic: string): void {
    this.dropTopicRows.run(topic);
    this.dropTopicDeliveries.run(topic);
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
