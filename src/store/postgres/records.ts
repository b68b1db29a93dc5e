import type { MessageState } from "../../contract/types.js";
import { ANSWER_BUDGET_BYTES } from "../../core/answer-budget.js";
import { leaseFence } from "../../core/lease-fence.js";
import { RECORD_COLUMNS, type RecordRow } from "../../core/message-record.js";
import type { Async } from "../../core/port.js";
import { RECEIPT_TTL_MS } from "../../core/receipts.js";
import type {
  BrowseQuery,
  ErrorRow,
  RecordOps,
  SettledMark,
  SettledMatch,
  SettledStep,
} from "../../core/verbs/records.js";
import type { Conn } from "./db.js";
import { pgName } from "./names.js";

/**
 * The records matching `where` (which may end with its ORDER BY and LIMIT), in `order`, up to the
 * one whose body, properties and result cross the answer budget: the running sum is taken on the
 * lengths alone, so the rows after it are never sent (the query read every row of a page of
 * 1,000 before, a gigabyte for messages of 1 MiB, which the core then cut to 32 MiB).
 * `keys`: the columns `order` sorts by.
 */
function withinBudget(where: string, order: string, keys: string): string {
  return `
    SELECT ${RECORD_COLUMNS} FROM messages WHERE id IN (
      SELECT id FROM (
        SELECT id, coalesce(sum(len) OVER (ORDER BY ${order} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
        FROM (
          SELECT ${keys}, octet_length(body) + coalesce(octet_length(properties), 0) + coalesce(octet_length(result), 0) AS len
          FROM messages WHERE ${where}
        ) page
      ) running WHERE before < ${ANSWER_BUDGET_BYTES}
    ) ORDER BY ${order}`;
}

/**
 * Writes, from the deleted rows `d`, the receipts of kept completions settled after `since`: a
 * completion kept at least a receipt's lifetime wrote none (its row answered a replay), so a row
 * deleted early leaves its receipt behind for the rest of that lifetime.
 */
const KEPT_RECEIPTS = (since: string) => `
  kept AS (INSERT INTO settlement_receipts (queue, seq_number, lock_token, operation, args, created_at, expires_at)
    SELECT queue, id, lock_token, 'completed', '', settled_at, settled_at + ${RECEIPT_TTL_MS} FROM d
    WHERE state = 'completed' AND lock_token IS NOT NULL AND settled_at > ${since}
    ON CONFLICT DO NOTHING)`;

/** A `SettledMatch` as conditions on $1..$4 (see `settledParams`). */
const SETTLED_MATCH = `queue = $1 AND ($2::bigint IS NULL OR settled_at < $2::bigint)
  AND ($3::bigint[] IS NULL OR id = ANY($3::bigint[])) AND ($4::text IS NULL OR subject = $4::text)`;

const settledParams = (a: SettledMatch) => [
  pgName(a.queue),
  a.settledBefore ?? null,
  a.seqNumbers ?? null,
  a.subject ?? null,
];

const LIVE_FENCE = leaseFence({ seq: "$1", queue: "$2", token: "$3" });

const CANCELLED =
  "state = 'cancelled', settled_at = $4, expires_at = $4 + $5::bigint, lock_token = NULL, locked_until = 0";

/** The job records' statements on PostgreSQL, on one connection (the rules are in core/verbs/records.ts). */
export class PgRecordOps implements Async<RecordOps> {
  constructor(private readonly c: Conn) {}

  async cancelHeld(a: {
    queue: string;
    seq: number;
    token: string;
    now: number;
    retainMs: number;
  }): Promise<boolean> {
    const rows = await this.c.q(`UPDATE messages SET ${CANCELLED} WHERE ${LIVE_FENCE} RETURNING 1`, [
      a.seq,
      pgName(a.queue),
      a.token,
      a.now,
      a.retainMs,
    ]);
    return rows.length > 0;
  }

  async cancelWaiting(a: { queue: string; seq: number; now: number; retainMs: number }): Promise<boolean> {
    const rows = await this.c.q(
      `UPDATE messages SET ${CANCELLED}
       WHERE id = $1 AND queue = $2 AND state IN ('active', 'scheduled', 'deferred') AND $3::text IS NULL RETURNING 1`,
      [a.seq, pgName(a.queue), null, a.now, a.retainMs],
    );
    return rows.length > 0;
  }

  async requestCancel(a: { queue: string; seq: number }): Promise<boolean> {
    const rows = await this.c.q(
      "UPDATE messages SET cancel_requested = 1 WHERE id = $1 AND queue = $2 AND state = 'locked' RETURNING 1",
      [a.seq, pgName(a.queue)],
    );
    return rows.length > 0;
  }

  async setProgress(a: { queue: string; seq: number; token: string; progress: number }): Promise<boolean> {
    const rows = await this.c.q(`UPDATE messages SET progress = $4 WHERE ${LIVE_FENCE} RETURNING 1`, [
      a.seq,
      pgName(a.queue),
      a.token,
      a.progress,
    ]);
    return rows.length > 0;
  }

  records(seqs: number[]): Promise<RecordRow[]> {
    return this.c.q<RecordRow>(withinBudget("id = ANY($1::bigint[])", "id", "id"), [seqs]);
  }

  states(seqs: number[]): Promise<{ id: number; state: MessageState }[]> {
    return this.c.q<{ id: number; state: MessageState }>(
      "SELECT id, state FROM messages WHERE id = ANY($1::bigint[])",
      [seqs],
    );
  }

  browse(q: BrowseQuery): Promise<RecordRow[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const param = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    if (q.queues) where.push(`queue = ANY(${param(q.queues.map(pgName))}::text[])`);
    if (q.states) where.push(`state = ANY(${param(q.states)}::text[])`);
    if (q.backingOff !== undefined) {
      where.push(`(state = 'scheduled' AND delivery_count > 0) = ${q.backingOff ? "true" : "false"}`);
    }
    if (q.subject !== undefined) where.push(`subject = ${param(q.subject)}`);
    if (q.settledBefore !== undefined) {
      where.push(`settled_at > 0 AND settled_at < ${param(q.settledBefore)}::bigint`);
    }
    const order = q.order === "settled" ? "settled_at DESC, id DESC" : "id DESC";
    const page = `${where.length ? where.join(" AND ") : "true"} ORDER BY ${order} LIMIT ${q.limit} OFFSET ${q.offset}`;
    return this.c.q<RecordRow>(
      withinBudget(page, order, q.order === "settled" ? "id, settled_at" : "id"),
      params,
    );
  }

  errors(seq: number): Promise<ErrorRow[]> {
    return this.c.q<ErrorRow>(
      "SELECT seq_number, attempt, error, failed_at FROM message_errors WHERE seq_number = $1 ORDER BY id",
      [seq],
    );
  }

  async keptMark(
    a: SettledMatch & { states: MessageState[]; keep: number },
  ): Promise<SettledMark | undefined> {
    const [row] = await this.c.q<{ settled_at: string | number; id: string | number }>(
      `SELECT settled_at, id FROM messages WHERE ${SETTLED_MATCH} AND state = ANY($5::text[])
       ORDER BY settled_at DESC, id DESC OFFSET $6::bigint LIMIT 1`,
      [...settledParams(a), a.states, a.keep - 1],
    );
    return row && { settledAt: Number(row.settled_at), id: Number(row.id) };
  }

  async settledKeys(
    a: SettledMatch & { state: MessageState; after: number; limit: number },
  ): Promise<[number, number][]> {
    const rows = await this.c.q<{ settled_at: number; id: number }>(
      `SELECT settled_at, id FROM messages WHERE ${SETTLED_MATCH} AND state = $5 AND id > $6::bigint
       ORDER BY id LIMIT $7::bigint`,
      [...settledParams(a), a.state, a.after, a.limit],
    );
    return rows.map((r) => [Number(r.settled_at), Number(r.id)]);
  }

  async deleteSettled(a: SettledStep): Promise<{ deleted: number; through?: number }> {
    const match = `${SETTLED_MATCH} AND state = $5 AND id > $6::bigint
      AND ($7::bigint IS NULL OR (settled_at, id) < ($7::bigint, $8::bigint))`;
    // The step's rows, first by number, then the same rows deleted as a range of numbers (one
    // range of idx_msg_queue_state, not a lookup by key each): both read one snapshot, and a row
    // changed since (redriven by another transaction) is matched again once its lock is had.
    const [row] = await this.c.q<{ n: number; picked: number; hi: string | number | null }>(
      `WITH pick AS (SELECT id FROM messages WHERE ${match} ORDER BY id LIMIT $9::bigint),
       edge AS (SELECT count(*)::int AS picked, max(id) AS hi FROM pick),
       d AS (DELETE FROM messages WHERE ${match} AND id <= (SELECT hi FROM edge)
         RETURNING queue, id, lock_token, state, settled_at), ${KEPT_RECEIPTS("$10::bigint")}
       SELECT (SELECT count(*)::int FROM d) AS n, picked, hi FROM edge`,
      [
        ...settledParams(a),
        a.state,
        a.after,
        a.below?.settledAt ?? null,
        a.below?.id ?? null,
        a.limit,
        a.receiptsSince,
      ],
    );
    const deleted = row?.n ?? 0;
    return row?.picked === a.limit ? { deleted, through: Number(row.hi) } : { deleted };
  }

  async promote(a: { queue: string; seqs: number[]; now: number }): Promise<number> {
    const rows = await this.c.q(
      // Each row reached by its id (see `seekById` in core/lease-fence.ts), not through the queue's scheduled rows.
      `UPDATE messages SET state = 'active', visible_at = $3
       WHERE id = ANY($2::bigint[]) AND (queue = $1 AND state = 'scheduled') IS TRUE RETURNING 1`,
      [pgName(a.queue), a.seqs, a.now],
    );
    return rows.length;
  }

  async remove(a: { queue: string; seqs: number[]; receiptsSince: number }): Promise<number[]> {
    const rows = await this.c.q<{ id: string | number }>(
      // Each row reached by its id (see `seekById` in core/lease-fence.ts), not through the queue's rows.
      `WITH d AS (DELETE FROM messages WHERE id = ANY($2::bigint[]) AND (queue = $1 AND state <> 'locked') IS TRUE
         RETURNING queue, id, lock_token, state, settled_at), ${KEPT_RECEIPTS("$3::bigint")}
       SELECT id FROM d`,
      [pgName(a.queue), a.seqs, a.receiptsSince],
    );
    return rows.map((r) => Number(r.id));
  }
}
