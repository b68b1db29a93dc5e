import type { Statement } from "better-sqlite3";
import type { PreparedMessage } from "../../core/outgoing.js";
import type { QueueRow } from "../../core/queue-config.js";
import type { FreshRows, Route, SendOps } from "../../core/verbs/send.js";
import type { HandOff, RowLock } from "../../core/verbs/send-hand-off.js";
import type { DedupHit, DedupKey, NewRow } from "../../core/verbs/send-rows.js";
import { claimable, groupRule } from "./claim.js";
import type { SqliteDatabase } from "./database.js";
import type { QueueCounter } from "./queue-counter.js";
import type { QueueRegistry } from "./queue-registry.js";
import { COLUMN_COUNT, RowInserter } from "./row-insert.js";
import type { SequenceNumbers } from "./sequence-numbers.js";
import type { Subscriptions } from "./subscriptions.js";
import type { TopicLog } from "./topic-log.js";

/**
 * Rows per multi-row INSERT. One statement per row costs a third of a batch's time in calls into
 * SQLite; 64 rows per statement take that back.
 */
const ROWS_PER_STATEMENT = 64;

/**
 * Whether a claimable row of `@queue` has priority `@floor` or more: a parked receiver's claim would
 * take it before a send's new rows. Two seeks, as the claim's own arms: the partial index of
 * prioritized rows, and for a floor of 0 or less the per-state index's priority-0 rows. A row its
 * group holds back (an earlier one of its group in flight) is not one: the claim would skip it too.
 */
const CLAIMABLE_FROM = `
  SELECT 1 FROM (SELECT 1 FROM messages m INDEXED BY idx_msg_claim_priority
                 WHERE m.priority <> 0 AND m.priority >= @floor AND ${claimable} AND ${groupRule} LIMIT 1)
  UNION ALL
  SELECT 1 FROM (SELECT 1 FROM messages m INDEXED BY idx_msg_queue_state
                 WHERE @floor <= 0 AND m.priority = 0 AND ${claimable} AND ${groupRule} LIMIT 1)
  LIMIT 1`;

/**
 * The send statements (and debounce windows' statements) on SQLite, inside the caller's write transaction. One writer at a time holds
 * the file, so concurrent senders need no ordering of their own (`serialize` does nothing); the
 * queue, subscription and declaration rows come from the caches the writer keeps current.
 */
export class SqliteSendOps implements SendOps {
  private readonly rows: RowInserter;
  private readonly findDedupRow: Statement;
  private readonly upsertDedup: Statement;
  private readonly findLiveRow: Statement;
  private readonly cancelRow: Statement;
  private readonly findWindow: Statement;
  private readonly move: Statement;
  private readonly moveWithBody: Statement;
  private readonly open: Statement;
  private readonly claimableFrom: Statement;

  constructor(
    db: SqliteDatabase,
    ids: SequenceNumbers,
    private readonly queues: QueueRegistry,
    private readonly subscriptions: Subscriptions,
    private readonly topicLog: TopicLog,
    counts: QueueCounter,
  ) {
    this.rows = new RowInserter(db, ids, counts);
    this.findLiveRow = db
      .prepare(`
      SELECT id FROM messages INDEXED BY idx_msg_unique_key
      WHERE queue = ? AND unique_key = ? AND unique_key IS NOT NULL AND state IN ('active', 'locked', 'deferred', 'scheduled')`)
      .pluck();
    this.findDedupRow = db.prepare(
      "SELECT request_hash, seq_number FROM dedup WHERE queue = ? AND key = ? AND seen_at > ?",
    );
    this.upsertDedup = db.prepare(`
      INSERT INTO dedup (queue, key, request_hash, seq_number, seen_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (queue, key) DO UPDATE SET request_hash = excluded.request_hash,
        seq_number = excluded.seq_number, seen_at = excluded.seen_at`);
    this.cancelRow = db.prepare(
      "DELETE FROM messages WHERE id = ? AND queue = ? AND state = 'scheduled' AND delivery_count = 0",
    );
    this.findWindow = db.prepare(
      `SELECT w.seq AS seq, w.opened_at AS openedAt FROM debounce_windows w JOIN messages m ON m.id = w.seq
       WHERE w.queue = ? AND w.key = ? AND m.state = 'scheduled' AND m.delivery_count = 0`,
    );
    this.claimableFrom = db.prepare(CLAIMABLE_FROM).pluck();
    this.move = db.prepare("UPDATE messages SET visible_at = ? WHERE id = ?");
    this.moveWithBody = db.prepare("UPDATE messages SET visible_at = ?, body = ? WHERE id = ?");
    this.open = db.prepare(
      `INSERT INTO debounce_windows (queue, key, seq, opened_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (queue, key) DO UPDATE SET seq = excluded.seq, opened_at = excluded.opened_at`,
    );
  }

  route(name: string): Route {
    const targets = this.subscriptions.targets(name);
    const queue = targets ? undefined : this.queues.get(name);
    const declared = queue ? undefined : this.topicLog.declared(name);
    return { targets, queue, declared };
  }

  queueRows(names: string[]): Map<string, QueueRow> {
    const out = new Map<string, QueueRow>();
    for (const n of names) {
      const q = this.queues.get(n);
      if (q) out.set(n, q);
    }
    return out;
  }

  createQueue(name: string, now: number): QueueRow {
    this.queues.upsert(name, undefined, now);
    return this.queues.require(name);
  }

  serialize(): void {}

  findLive(queue: string, uniqueKey: string): number | undefined {
    return this.findLiveRow.get(queue, uniqueKey) as number | undefined;
  }

  findDedup(queue: string, key: string, since: number): DedupHit | undefined {
    const row = this.findDedupRow.get(queue, key, since) as
      | { request_hash: string; seq_number: number }
      | undefined;
    return row && { hash: row.request_hash, seq: row.seq_number };
  }

  insert(row: NewRow, dedup?: DedupKey): number {
    const values: unknown[] = new Array(COLUMN_COUNT);
    writeRow(values, 0, row);
    const seq = this.rows.run(values, 1);
    if (dedup) this.upsertDedup.run(row.queue.name, dedup.key, dedup.hash, seq, row.enqueuedAt);
    return seq;
  }

  insertMany(rows: readonly NewRow[], locks?: readonly (RowLock | undefined)[]): number[] {
    const out: number[] = new Array(rows.length);
    for (let from = 0; from < rows.length; from += ROWS_PER_STATEMENT) {
      const n = Math.min(ROWS_PER_STATEMENT, rows.length - from);
      // Sized up front: growing an array row by row cost more than writing the rows.
      const values: unknown[] = new Array(n * COLUMN_COUNT);
      for (let i = 0; i < n; i++) writeRow(values, i * COLUMN_COUNT, rows[from + i]!, locks?.[from + i]);
      const last = this.rows.run(values, n);
      // One statement's rows take consecutive ids.
      for (let i = 0; i < n; i++) out[from + i] = last - n + 1 + i;
    }
    return out;
  }

  /**
   * The caller read `queue` from the cache before this transaction began. The writer drops the
   * cache when another connection has committed, and a write of this process that changes a queue
   * forgets its row: the row found now is another object when the caller's copy is stale.
   */
  insertFresh(queue: QueueRow, rows: readonly NewRow[], h?: HandOff): FreshRows | undefined {
    if (this.queues.get(queue.name) !== queue) return undefined;
    const now = rows[0]!.enqueuedAt;
    const handed =
      h !== undefined && this.claimableFrom.get({ queue: queue.name, now, floor: h.floor }) === undefined;
    return { ids: this.insertMany(rows, handed ? h.locks : undefined), handed };
  }

  appendLog(topic: string, m: PreparedMessage, now: number, expiresAt: number): number {
    return this.topicLog.append(topic, m, now, expiresAt);
  }

  cancel(queue: string, seq: number): boolean {
    return this.cancelRow.run(seq, queue).changes > 0;
  }

  lockWindow(): void {}

  openWindow(queue: string, key: string): { seq: number; openedAt: number } | undefined {
    return this.findWindow.get(queue, key) as { seq: number; openedAt: number } | undefined;
  }

  moveWindow(seq: number, at: number, body: Buffer | undefined): void {
    if (body) this.moveWithBody.run(at, body, seq);
    else this.move.run(at, seq);
  }

  openedWindow(queue: string, key: string, seq: number, now: number): void {
    this.open.run(queue, key, seq, now);
  }
}

/**
 * Writes one row's values (in `INSERT_COLUMNS` order) at `at`; with `lock`, as a row handed to a
 * parked receiver: locked for it, delivered once, at the send's time.
 */
function writeRow(values: unknown[], at: number, r: NewRow, lock?: RowLock): void {
  const m = r.m;
  values[at] = r.queue.name;
  values[at + 1] = lock ? "locked" : r.state;
  values[at + 2] = r.priority;
  values[at + 3] = r.visibleAt;
  values[at + 4] = r.enqueuedAt;
  values[at + 5] = r.expiresAt;
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
  values[at + 17] = r.origin?.topic ?? null;
  values[at + 18] = r.origin?.subscription ?? null;
  values[at + 19] = lock ? lock.token : null;
  values[at + 20] = lock ? lock.lockedUntil : 0;
  values[at + 21] = lock ? 1 : 0;
  values[at + 22] = lock ? r.enqueuedAt : 0;
}
