import { createHash } from "node:crypto";
import { GroupRequiredError } from "../contract/errors.js";
import type { SqliteDatabase } from "../store/database.js";
import type { PreparedMessage } from "./outgoing.js";
import type { QueueRow } from "./queue-config.js";

/** What happened to one message sent to one queue. */
export type InsertOutcome =
  | { kind: "inserted"; seq: number; state: "active" | "scheduled"; visibleAt: number }
  | { kind: "duplicate"; seq: number }
  | { kind: "conflict" };

export interface InsertTiming {
  now: number;
  /** The delivery time: `now` for an immediate send. */
  visibleAt: number;
  /** Per-message TTL of the request (0 = none). */
  ttlMs: number;
}

function sha256(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}

/**
 * Inserts one message into one queue inside the caller's transaction: the group rule, the dedup gate,
 * the effective TTL (anchored at the delivery time, capped by the queue's default).
 */
export class MessageInserter {
  private readonly insertRow;
  private readonly findDedup;
  private readonly upsertDedup;
  private readonly findLive;

  constructor(db: SqliteDatabase) {
    // Positional parameters: binding 19 named ones costs a fifth of a batch insert's time.
    this.insertRow = db.prepare(`
      INSERT INTO messages (queue, state, priority, visible_at, enqueued_at, expires_at, message_id, correlation_id,
        reply_to, group_id, content_type, subject, properties, body, max_deliveries, lock_duration_ms, unique_key,
        topic, subscription)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.findLive = db.prepare(`
      SELECT id FROM messages INDEXED BY idx_msg_unique_key
      WHERE queue = ? AND unique_key = ? AND unique_key IS NOT NULL AND state IN ('active', 'locked', 'deferred', 'scheduled')`);
    this.findDedup = db.prepare(
      "SELECT request_hash, seq_number FROM dedup WHERE queue = ? AND key = ? AND seen_at > ?",
    );
    this.upsertDedup = db.prepare(`
      INSERT INTO dedup (queue, key, request_hash, seq_number, seen_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (queue, key) DO UPDATE SET request_hash = excluded.request_hash,
        seq_number = excluded.seq_number, seen_at = excluded.seen_at`);
  }

  /** `origin`: the topic and task subscription a job delivery was routed through. */
  insert(
    queue: QueueRow,
    m: PreparedMessage,
    t: InsertTiming,
    origin?: { topic: string; subscription: string },
  ): InsertOutcome {
    if (queue.ordering_mode === "group_fifo" && m.groupId === null) throw new GroupRequiredError();
    if (m.uniqueKey !== null) {
      // A live message holds its key: the send answers with it (like a dedup hit).
      const live = this.findLive.get(queue.name, m.uniqueKey) as { id: number } | undefined;
      if (live) return { kind: "duplicate", seq: live.id };
    }
    let dedupKey: string | undefined;
    let hash: string | undefined;
    if (queue.dedup_window_ms > 0) {
      hash = sha256(m.body);
      dedupKey = m.messageId ?? hash;
      const seen = this.findDedup.get(queue.name, dedupKey, t.now - queue.dedup_window_ms) as
        | { request_hash: string; seq_number: number }
        | undefined;
      if (seen) {
        return seen.request_hash === hash
          ? { kind: "duplicate", seq: seen.seq_number }
          : { kind: "conflict" };
      }
    }
    let ttl = t.ttlMs;
    if (queue.default_ttl_ms > 0 && (ttl <= 0 || ttl > queue.default_ttl_ms)) ttl = queue.default_ttl_ms;
    const state = t.visibleAt > t.now ? "scheduled" : "active";
    const seq = Number(
      this.insertRow.run(
        queue.name,
        state,
        // strict_fifo delivers in sequence order only: priority would break it, so it is not stored.
        queue.ordering_mode === "strict_fifo" ? 0 : m.priority,
        t.visibleAt,
        t.now,
        ttl > 0 ? t.visibleAt + ttl : 0,
        m.messageId,
        m.correlationId,
        m.replyTo,
        m.groupId,
        m.contentType,
        m.subject,
        m.propertiesJson,
        m.body,
        m.maxDeliveries,
        m.lockDurationMs,
        m.uniqueKey,
        origin?.topic ?? null,
        origin?.subscription ?? null,
      ).lastInsertRowid,
    );
    if (dedupKey !== undefined && hash !== undefined) {
      this.upsertDedup.run(queue.name, dedupKey, hash, seq, t.now);
    }
    return { kind: "inserted", seq, state, visibleAt: t.visibleAt };
  }
}
