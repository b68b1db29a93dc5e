import { InvalidArgumentError, LockLostError, MessageTooLargeError } from "../../contract/errors.js";
import type {
  AttemptError,
  BrowseOptions,
  CancelOutcome,
  DeleteSettledOptions,
  MessageRecord,
} from "../../contract/job-service.js";
import { MESSAGE_STATES, type MessageState, SETTLED_STATES } from "../../contract/types.js";
import { ANSWER_BUDGET_BYTES, AnswerBudget } from "../../core/answer-budget.js";
import { leaseFence } from "../../core/lease-fence.js";
import { type MessageRow, PEEK_COLUMNS, peekedMessage } from "../../core/message-row.js";
import { RECEIPT_TTL_MS } from "../../core/receipts.js";
import { keepNewest } from "../../core/validate.js";
import type { SqliteDatabase } from "./database.js";
import { keptCompletionReceiptsSql } from "./receipts.js";

/** Every column of a record: peek's, plus the queue and what the job face reads. */
const RECORD_COLUMNS = `${PEEK_COLUMNS}, queue, result, delivered_at, settled_at, progress, unique_key,
  cancel_requested, redrive_count,
  (SELECT e.error FROM message_errors e WHERE e.seq_number = messages.id ORDER BY e.id DESC LIMIT 1) AS last_error`;

interface RecordRow extends MessageRow {
  queue: string;
  state: MessageState;
  result: Buffer | null;
  delivered_at: number;
  settled_at: number;
  progress: number | null;
  unique_key: string | null;
  cancel_requested: number;
  redrive_count: number;
  last_error: string | null;
}

function toRecord(row: RecordRow): MessageRecord {
  const m = peekedMessage(row) as MessageRecord;
  m.queue = row.queue;
  m.state = row.state;
  if (row.delivered_at) m.deliveredAt = row.delivered_at;
  if (row.settled_at) m.settledAt = row.settled_at;
  if (row.result !== null) m.result = row.result;
  if (row.progress !== null) m.progress = row.progress;
  if (row.unique_key !== null) m.uniqueKey = row.unique_key;
  if (row.cancel_requested) m.cancelRequested = true;
  if (row.redrive_count) m.redriveCount = row.redrive_count;
  if (row.last_error !== null) m.lastError = row.last_error;
  return m;
}

const LIVE_FENCE = leaseFence({ seq: "@seq", queue: "@queue", token: "@token" });
const MAX_BROWSE = 1000;

function stateList(states: MessageState[] | undefined, allowed: readonly MessageState[]): MessageState[] {
  const list = states && states.length > 0 ? states : [...allowed];
  for (const s of list) {
    if (!allowed.includes(s)) throw new InvalidArgumentError(`mqlite: unknown or unsupported state "${s}"`);
  }
  return list;
}

/**
 * Reading and shaping stored messages beyond the broker face's peek: records by sequence number,
 * cross-queue browsing, the per-delivery error history, cancellation, progress and the deletion of
 * settled messages (kept outcomes and dead letters).
 */
export class MessageRecords {
  private readonly byIds;
  private readonly statesByIds;
  private readonly errorsOf;
  private readonly cancelWaiting;
  private readonly cancelHeld;
  private readonly requestCancel;
  private readonly progressRow;
  private readonly dropRetained;
  private readonly browseCache = new Map<string, ReturnType<SqliteDatabase["prepare"]>>();

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
    this.cancelWaiting = db.prepare(`
      UPDATE messages SET ${cancelled}
      WHERE id = @seq AND queue = @queue AND state IN ('active', 'scheduled', 'deferred')`);
    this.cancelHeld = db.prepare(`UPDATE messages SET ${cancelled} WHERE ${LIVE_FENCE}`);
    this.requestCancel = db.prepare(
      "UPDATE messages SET cancel_requested = 1 WHERE id = @seq AND queue = @queue AND state = 'locked'",
    );
    this.progressRow = db.prepare(`UPDATE messages SET progress = @progress WHERE ${LIVE_FENCE}`);
    this.dropRetained = db.prepare(`
      DELETE FROM messages WHERE id IN (SELECT id FROM messages INDEXED BY idx_msg_expire
        WHERE expires_at > 0 AND expires_at <= ? AND state <> 'dead_lettered' AND state IN ('completed', 'cancelled')
        LIMIT 10000)`);
  }

  get(seqs: number[]): MessageRecord[] {
    if (seqs.length === 0) return [];
    const budget = new AnswerBudget();
    const out: MessageRecord[] = [];
    for (const row of this.byIds.iterate(JSON.stringify(seqs)) as Iterable<RecordRow>) {
      out.push(toRecord(row));
      // Leaving out messages that exist would read as "unknown": refuse the whole answer instead.
      if (!budget.add(row) && out.length < seqs.length) {
        throw new MessageTooLargeError(
          `mqlite: the answer would be over ${ANSWER_BUDGET_BYTES} bytes; ask for fewer messages at once`,
        );
      }
    }
    return out;
  }

  /** The sequence numbers among `seqs` that are settled or gone. */
  settled(seqs: number[]): number[] {
    const states = new Map(
      (this.statesByIds.all(JSON.stringify(seqs)) as { id: number; state: MessageState }[]).map((r) => [
        r.id,
        r.state,
      ]),
    );
    return seqs.filter((s) => {
      const state = states.get(s);
      return state === undefined || SETTLED_STATES.includes(state);
    });
  }

  browse(options: BrowseOptions): MessageRecord[] {
    const where: string[] = [];
    const params: Record<string, unknown> = {};
    if (options.queues) {
      if (options.queues.length === 0) return [];
      where.push("queue IN (SELECT value FROM json_each(@queues))");
      params.queues = JSON.stringify(options.queues);
    }
    if (options.states) {
      where.push("state IN (SELECT value FROM json_each(@states))");
      params.states = JSON.stringify(stateList(options.states, MESSAGE_STATES));
    }
    if (options.backingOff !== undefined) {
      where.push(`(state = 'scheduled' AND delivery_count > 0) = ${options.backingOff ? 1 : 0}`);
    }
    if (options.subject !== undefined) {
      where.push("subject = @subject");
      params.subject = options.subject;
    }
    if (options.settledBefore !== undefined) {
      where.push("settled_at > 0 AND settled_at < @settledBefore");
      params.settledBefore = options.settledBefore;
    }
    const order = options.order === "settled" ? "settled_at DESC, id DESC" : "id DESC";
    const limit = Math.min(Math.max(1, Math.trunc(options.limit ?? 100) || 100), MAX_BROWSE);
    const offset = Math.max(0, Math.trunc(options.offset ?? 0) || 0);
    const sql = `SELECT ${RECORD_COLUMNS} FROM messages ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`;
    let stmt = this.browseCache.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      if (this.browseCache.size < 256) this.browseCache.set(sql, stmt);
    }
    const budget = new AnswerBudget();
    const out: MessageRecord[] = [];
    for (const row of stmt.iterate(params) as Iterable<RecordRow>) {
      out.push(toRecord(row));
      if (!budget.add(row)) break;
    }
    return out;
  }

  errors(seq: number): AttemptError[] {
    return (
      this.errorsOf.all(seq) as { seq_number: number; attempt: number; error: string; failed_at: number }[]
    ).map((r) => ({ seqNumber: r.seq_number, attempt: r.attempt, error: r.error, failedAt: r.failed_at }));
  }

  cancel(
    queue: string,
    seq: number,
    token: string | undefined,
    retainMs: number,
    now: number,
  ): CancelOutcome {
    const retain = Math.max(0, retainMs);
    if (token) {
      if (this.cancelHeld.run({ queue, seq, token, now, retain }).changes === 0) throw new LockLostError();
      return "cancelled";
    }
    if (this.cancelWaiting.run({ queue, seq, now, retain }).changes > 0) return "cancelled";
    if (this.requestCancel.run({ queue, seq }).changes > 0) return "requested";
    return "none";
  }

  setProgress(queue: string, seq: number, token: string, progress: number, now: number): void {
    if (!token || this.progressRow.run({ queue, seq, token, progress, now }).changes === 0) {
      throw new LockLostError();
    }
  }

  /**
   * Deletes settled messages of a queue (kept outcomes, dead letters). A kept completion deleted
   * within a receipt's lifetime leaves the receipt its row stood in for.
   */
  deleteSettled(queue: string, options: DeleteSettledOptions, now: number): number {
    const states = stateList(options.states, SETTLED_STATES);
    const olderThan = Math.max(0, options.olderThanMs ?? 0);
    const params: unknown[] = [queue, JSON.stringify(states)];
    let where = "queue = ? AND state IN (SELECT value FROM json_each(?))";
    if (olderThan > 0) {
      where += " AND settled_at < ?";
      params.push(now - olderThan);
    }
    if (options.seqNumbers) {
      where += " AND id IN (SELECT value FROM json_each(?))";
      params.push(JSON.stringify(options.seqNumbers));
    }
    if (options.subject !== undefined) {
      where += " AND subject = ?";
      params.push(options.subject);
    }
    const keep = keepNewest(options.keepNewest);
    if (keep !== undefined) {
      // Retention by count: all but the newest `keep` of the matching rows.
      where += ` AND id NOT IN (SELECT id FROM messages WHERE ${where} ORDER BY settled_at DESC, id DESC LIMIT ?)`;
      params.push(...params, keep);
    }
    if (states.includes("completed")) {
      this.db.prepare(keptCompletionReceiptsSql(where)).run(...params, now - RECEIPT_TTL_MS);
    }
    return this.db.prepare(`DELETE FROM messages WHERE ${where}`).run(...params).changes;
  }

  /** Scheduled messages of the queue → active now. Returns how many. */
  promote(queue: string, seqs: number[], now: number): number {
    if (seqs.length === 0) return 0;
    return this.db
      .prepare(
        `UPDATE messages SET state = 'active', visible_at = ?
         WHERE queue = ? AND state = 'scheduled' AND id IN (SELECT value FROM json_each(?))`,
      )
      .run(now, queue, JSON.stringify(seqs)).changes;
  }

  /** Deletes messages of the queue that are not locked. Returns the deleted ones' sequence numbers. */
  remove(queue: string, seqs: number[], now: number): number[] {
    if (seqs.length === 0) return [];
    const where = "queue = ? AND state <> 'locked' AND id IN (SELECT value FROM json_each(?))";
    const params = [queue, JSON.stringify(seqs)];
    this.db.prepare(keptCompletionReceiptsSql(where)).run(...params, now - RECEIPT_TTL_MS);
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
