import type { Statement } from "better-sqlite3";
import type { MessageState } from "../../contract/types.js";
import { AnswerBudget } from "../../core/answer-budget.js";
import { leaseFence } from "../../core/lease-fence.js";
import { RECORD_COLUMNS, type RecordRow } from "../../core/message-record.js";
import type {
  BrowseQuery,
  ErrorRow,
  RecordOps,
  SettledMark,
  SettledMatch,
  SettledStep,
} from "../../core/verbs/records.js";
import type { SqliteDatabase } from "./database.js";
import { keptCompletionReceiptsSql } from "./receipts.js";

const LIVE_FENCE = leaseFence({ seq: "@seq", queue: "@queue", token: "@token" });

/**
 * The job records' statements on SQLite (the rules are in core/verbs/records.ts). Reads of records
 * stop at the row that crosses the answer budget, so a page of large messages is never all read.
 */
export class SqliteRecordOps implements RecordOps {
  private readonly byIds;
  private readonly statesByIds;
  private readonly errorsOf;
  private readonly cancelWaitingRow;
  private readonly cancelHeldRow;
  private readonly requestCancelRow;
  private readonly progressRow;
  private readonly dropRetained;
  /** Statements whose text follows their options (browse's filters, deleteSettled's), by text. */
  private readonly shaped = new Map<string, Statement<unknown[]>>();

  constructor(private readonly db: SqliteDatabase) {
    this.byIds = db.prepare(
      `SELECT ${RECORD_COLUMNS} FROM messages WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`,
    );
    this.statesByIds = db.prepare(
      "SELECT id, state FROM messages WHERE id IN (SELECT value FROM json_each(?))",
    );
    this.errorsOf = db.prepare(
      "SELECT seq_number, attempt, error, failed_at FROM message_errors WHERE seq_number = ? ORDER BY id",
    );
    const cancelled =
      "state = 'cancelled', settled_at = @now, expires_at = @now + @retain, lock_token = NULL, locked_until = 0";
    this.cancelWaitingRow = db.prepare(`
      UPDATE messages SET ${cancelled}
      WHERE id = @seq AND queue = @queue AND state IN ('active', 'scheduled', 'deferred')`);
    this.cancelHeldRow = db.prepare(`UPDATE messages SET ${cancelled} WHERE ${LIVE_FENCE}`);
    this.requestCancelRow = db.prepare(
      "UPDATE messages SET cancel_requested = 1 WHERE id = @seq AND queue = @queue AND state = 'locked'",
    );
    this.progressRow = db.prepare(`UPDATE messages SET progress = @progress WHERE ${LIVE_FENCE}`);
    this.dropRetained = db.prepare(`
      DELETE FROM messages WHERE id IN (SELECT id FROM messages INDEXED BY idx_msg_expire
        WHERE expires_at > 0 AND expires_at <= ? AND state <> 'dead_lettered' AND state IN ('completed', 'cancelled')
        LIMIT 10000)`);
  }

  cancelHeld(a: { queue: string; seq: number; token: string; now: number; retainMs: number }): boolean {
    const { queue, seq, token, now } = a;
    return this.cancelHeldRow.run({ queue, seq, token, now, retain: a.retainMs }).changes > 0;
  }

  cancelWaiting(a: { queue: string; seq: number; now: number; retainMs: number }): boolean {
    const { queue, seq, now } = a;
    return this.cancelWaitingRow.run({ queue, seq, now, retain: a.retainMs }).changes > 0;
  }

  requestCancel(a: { queue: string; seq: number }): boolean {
    return this.requestCancelRow.run({ queue: a.queue, seq: a.seq }).changes > 0;
  }

  setProgress(a: { queue: string; seq: number; token: string; progress: number }): boolean {
    return this.progressRow.run(a).changes > 0;
  }

  records(seqs: number[]): RecordRow[] {
    return untilBudget(this.byIds.iterate(JSON.stringify(seqs)) as Iterable<RecordRow>);
  }

  states(seqs: number[]): { id: number; state: MessageState }[] {
    return this.statesByIds.all(JSON.stringify(seqs)) as { id: number; state: MessageState }[];
  }

  browse(q: BrowseQuery): RecordRow[] {
    const where: string[] = [];
    const params: Record<string, unknown> = {};
    if (q.queues) {
      where.push("queue IN (SELECT value FROM json_each(@queues))");
      params.queues = JSON.stringify(q.queues);
    }
    if (q.states) {
      where.push("state IN (SELECT value FROM json_each(@states))");
      params.states = JSON.stringify(q.states);
    }
    if (q.backingOff !== undefined) {
      where.push(`(state = 'scheduled' AND delivery_count > 0) = ${q.backingOff ? 1 : 0}`);
    }
    if (q.subject !== undefined) {
      where.push("subject = @subject");
      params.subject = q.subject;
    }
    if (q.settledBefore !== undefined) {
      where.push("settled_at > 0 AND settled_at < @settledBefore");
      params.settledBefore = q.settledBefore;
    }
    const order = q.order === "settled" ? "settled_at DESC, id DESC" : "id DESC";
    const sql = `SELECT ${RECORD_COLUMNS} FROM messages ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY ${order} LIMIT ${q.limit} OFFSET ${q.offset}`;
    return untilBudget(this.prepared(sql).iterate(params) as Iterable<RecordRow>);
  }

  errors(seq: number): ErrorRow[] {
    return this.errorsOf.all(seq) as ErrorRow[];
  }

  keptMark(a: SettledMatch & { states: MessageState[]; keep: number }): SettledMark | undefined {
    const { where, params } = settledWhere(a);
    return this.prepared(
      `SELECT settled_at AS settledAt, id FROM messages
       WHERE ${where} AND state IN (SELECT value FROM json_each(?))
       ORDER BY settled_at DESC, id DESC LIMIT 1 OFFSET ?`,
    ).get(...params, JSON.stringify(a.states), a.keep - 1) as SettledMark | undefined;
  }

  settledKeys(a: SettledMatch & { state: MessageState; after: number; limit: number }): [number, number][] {
    const { where, params } = settledWhere(a);
    return this.prepared(
      `SELECT settled_at, id FROM messages WHERE ${where} AND state = ? AND id > ? ORDER BY id LIMIT ?`,
      true,
    ).all(...params, a.state, a.after, a.limit) as [number, number][];
  }

  deleteSettled(a: SettledStep): { deleted: number; through?: number } {
    const { where, params } = settledWhere(a);
    let match = `${where} AND state = ? AND id > ?`;
    params.push(a.state, a.after);
    if (a.below) {
      match += " AND (settled_at, id) < (?, ?)";
      params.push(a.below.settledAt, a.below.id);
    }
    // The step's rows, first by number: one range of idx_msg_queue_state, read from `after` on.
    const { n, hi } = this.prepared(
      `SELECT count(*) AS n, max(id) AS hi FROM (SELECT id FROM messages WHERE ${match} ORDER BY id LIMIT ?)`,
    ).get(...params, a.limit) as { n: number; hi: number | null };
    if (hi === null) return { deleted: 0 };
    // Up to the last of them, the same rows: a transaction writes alone on SQLite.
    const step = `${match} AND id <= ?`;
    params.push(hi);
    // Only completions can stand in for receipts.
    if (a.state === "completed")
      this.prepared(keptCompletionReceiptsSql(step)).run(...params, a.receiptsSince);
    const deleted = this.prepared(`DELETE FROM messages WHERE ${step}`).run(...params).changes;
    return n === a.limit ? { deleted, through: hi } : { deleted };
  }

  /**
   * The statement of this text, prepared once: a retention sweep runs the same few every 5 s.
   * `raw`: rows as arrays (a statement prepared raw stays raw, so it is kept apart).
   */
  private prepared(sql: string, raw = false): Statement<unknown[]> {
    const key = raw ? `raw:${sql}` : sql;
    let stmt = this.shaped.get(key);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      if (raw) stmt.raw();
      // Bounded: the texts come from the options' combinations, a few dozen.
      if (this.shaped.size < 256) this.shaped.set(key, stmt);
    }
    return stmt;
  }

  promote(a: { queue: string; seqs: number[]; now: number }): number {
    return this.db
      .prepare(
        `UPDATE messages SET state = 'active', visible_at = ?
         WHERE queue = ? AND state = 'scheduled' AND id IN (SELECT value FROM json_each(?))`,
      )
      .run(a.now, a.queue, JSON.stringify(a.seqs)).changes;
  }

  remove(a: { queue: string; seqs: number[]; receiptsSince: number }): number[] {
    const where = "queue = ? AND state <> 'locked' AND id IN (SELECT value FROM json_each(?))";
    const params = [a.queue, JSON.stringify(a.seqs)];
    this.db.prepare(keptCompletionReceiptsSql(where)).run(...params, a.receiptsSince);
    const rows = this.db.prepare(`DELETE FROM messages WHERE ${where} RETURNING id`).all(...params) as {
      id: number;
    }[];
    return rows.map((r) => r.id);
  }

  /** Deletes kept outcomes (completed, cancelled) whose retention lapsed. */
  sweepRetained(now: number): number {
    return this.dropRetained.run(now).changes;
  }
}

/** The rows up to the one that crosses the answer budget: the rest are never read. */
function untilBudget(rows: Iterable<RecordRow>): RecordRow[] {
  const budget = new AnswerBudget();
  const out: RecordRow[] = [];
  for (const row of rows) {
    out.push(row);
    if (!budget.add(row)) break;
  }
  return out;
}

/** The conditions of a `SettledMatch`, with their parameters. */
function settledWhere(a: SettledMatch): { where: string; params: unknown[] } {
  let where = "queue = ?";
  const params: unknown[] = [a.queue];
  if (a.settledBefore !== undefined) {
    where += " AND settled_at < ?";
    params.push(a.settledBefore);
  }
  if (a.seqNumbers) {
    where += " AND id IN (SELECT value FROM json_each(?))";
    params.push(JSON.stringify(a.seqNumbers));
  }
  if (a.subject !== undefined) {
    where += " AND subject = ?";
    params.push(a.subject);
  }
  return { where, params };
}
