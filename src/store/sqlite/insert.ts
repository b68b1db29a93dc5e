import { createHash } from "node:crypto";
import { GroupRequiredError } from "../../contract/errors.js";
import type { PreparedMessage } from "../../core/outgoing.js";
import type { QueueRow } from "../../core/queue-config.js";
import type { SqliteDatabase } from "./database.js";
import { COLUMN_COUNT, RowInserter } from "./row-insert.js";
import type { SequenceNumbers } from "./sequence-numbers.js";

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

/**
 * Rows per multi-row INSERT. One statement per row costs a third of a batch's time in calls into
 * SQLite; 64 rows per statement take that back.
 */
const ROWS_PER_STATEMENT = 64;

/** One row of a multi-row insert. */
export interface RowToInsert {
  queue: QueueRow;
  m: PreparedMessage;
  t: InsertTiming;
  origin?: Origin;
}

/** Where a message was routed from: the topic and task subscription of a job delivery. */
export interface Origin {
  topic: string;
  subscription: string;
}

function sha256(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}

/**
 * Inserts one message into one queue inside the caller's transaction: the group rule, the dedup gate,
 * the effective TTL (anchored at the delivery time, capped by the queue's default).
 */
export class MessageInserter {
  private readonly rows: RowInserter;
  private readonly findDedup;
  private readonly upsertDedup;
  private readonly findLive;

  constructor(db: SqliteDatabase, ids: SequenceNumbers) {
    this.rows = new RowInserter(db, ids);
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
  insert(queue: QueueRow, m: PreparedMessage, t: InsertTiming, origin?: Origin): InsertOutcome {
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
    const values: unknown[] = new Array(COLUMN_COUNT);
    const state = writeRow(values, 0, queue, m, t, origin);
    const seq = this.rows.run(values, 1);
    if (dedupKey !== undefined && hash !== undefined) {
      this.upsertDedup.run(queue.name, dedupKey, hash, seq, t.now);
    }
    return { kind: "inserted", seq, state, visibleAt: t.visibleAt };
  }

  /**
   * Inserts many rows (a batch for one queue, a publish's copies for several) with multi-row
   * INSERTs, when no row needs a check of its own first (no dedup window, no unique key, every
   * group given where the queue requires one). Undefined when one does: insert them one by one then.
   */
  insertRows(rows: readonly RowToInsert[]): InsertOutcome[] | undefined {
    for (const { queue, m } of rows) {
      if (queue.dedup_window_ms > 0 || m.uniqueKey !== null) return undefined;
      if (queue.ordering_mode === "group_fifo" && m.groupId === null) return undefined;
    }
    const out: InsertOutcome[] = [];
    for (let from = 0; from < rows.length; from += ROWS_PER_STATEMENT) {
      const chunk = rows.slice(from, from + ROWS_PER_STATEMENT);
      // Sized up front: growing an array row by row cost more than writing the rows.
      const values: unknown[] = new Array(chunk.length * COLUMN_COUNT);
      const states = chunk.map((r, i) => writeRow(values, i * COLUMN_COUNT, r.queue, r.m, r.t, r.origin));
      const last = this.rows.run(values, chunk.length);
      // One statement's rows take consecutive ids.
      chunk.forEach((r, i) => {
        out.push({
          kind: "inserted",
          seq: last - chunk.length + 1 + i,
          state: states[i]!,
          visibleAt: r.t.visibleAt,
        });
      });
    }
    return out;
  }
}

/**
 * Writes one row's values (in `INSERT_COLUMNS` order) at `at` for a message sent to `queue`; returns
 * its state. The TTL is anchored at the delivery time and capped by the queue's default.
 */
function writeRow(
  values: unknown[],
  at: number,
  queue: QueueRow,
  m: PreparedMessage,
  t: InsertTiming,
  origin: Origin | undefined,
): "active" | "scheduled" {
  let ttl = t.ttlMs;
  if (queue.default_ttl_ms > 0 && (ttl <= 0 || ttl > queue.default_ttl_ms)) ttl = queue.default_ttl_ms;
  const state = t.visibleAt > t.now ? "scheduled" : "active";
  values[at] = queue.name;
  values[at + 1] = state;
  // strict_fifo delivers in sequence order only: priority would break it, so it is not stored.
  values[at + 2] = queue.ordering_mode === "strict_fifo" ? 0 : m.priority;
  values[at + 3] = t.visibleAt;
  values[at + 4] = t.now;
  values[at + 5] = ttl > 0 ? t.visibleAt + ttl : 0;
  values[at + 6] = m.messageId;
  values[at + 7] = m.correlationId;
  values[at + 8] = m.replyTo;
  values[at + 9] = m.groupId;
  values[at + 10] = m.contentType;
  values[at + 11] = m.subject;
  values[at + 12] = m.propertiesJson;
  values[at + 13] = m.body;
  values[at + 14] = m.maxDeliveries;
  values[at + 15] = m.lockDurationMs;
  values[at + 16] = m.uniqueKey;
  values[at + 17] = origin?.topic ?? null;
  values[at + 18] = origin?.subscription ?? null;
  return state;
}
