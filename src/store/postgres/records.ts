import { InvalidArgumentError, LockLostError } from "../../contract/errors.js";
import type {
  AttemptError,
  BrowseOptions,
  CancelOutcome,
  DeleteSettledOptions,
  HeartbeatResult,
  MessageRecord,
  WorkerInfo,
  WorkerRecord,
} from "../../contract/job-service.js";
import { MESSAGE_STATES, type MessageState, SETTLED_STATES } from "../../contract/types.js";
import { leaseFence } from "../../core/lease-fence.js";
import { type MessageRow, peekedMessage } from "../../core/message-row.js";
import { RECEIPT_TTL_MS } from "../../core/receipts.js";
import { keepNewest } from "../../core/validate.js";
import { PEEK_COLUMNS } from "./columns.js";
import type { Conn } from "./db.js";

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

const LIVE_FENCE = leaseFence({ seq: "$1", queue: "$2", token: "$3" });
const MAX_BROWSE = 1000;

const CANCELLED =
  "state = 'cancelled', settled_at = $4, expires_at = $4 + $5::bigint, lock_token = NULL, locked_until = 0";

function stateList(states: MessageState[] | undefined, allowed: readonly MessageState[]): MessageState[] {
  const list = states && states.length > 0 ? states : [...allowed];
  for (const s of list) {
    if (!allowed.includes(s)) throw new InvalidArgumentError(`mqlite: unknown or unsupported state "${s}"`);
  }
  return list;
}

/**
 * Records by sequence number, cross-queue browsing, error history, cancellation, progress and the
 * deletion of settled messages, on PostgreSQL (the same rules as the SQLite engine's).
 */
export class PgRecords {
  async get(c: Conn, seqs: number[]): Promise<MessageRecord[]> {
    if (seqs.length === 0) return [];
    const rows = await c.q<RecordRow>(
      `SELECT ${RECORD_COLUMNS} FROM messages WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [seqs],
    );
    return rows.map(toRecord);
  }

  /** The sequence numbers among `seqs` that are settled or gone. */
  async settled(c: Conn, seqs: number[]): Promise<number[]> {
    const rows = await c.q<{ id: number; state: MessageState }>(
      "SELECT id, state FROM messages WHERE id = ANY($1::bigint[])",
      [seqs],
    );
    const states = new Map(rows.map((r) => [r.id, r.state]));
    return seqs.filter((s) => {
      const state = states.get(s);
      return state === undefined || SETTLED_STATES.includes(state);
    });
  }

  async browse(c: Conn, options: BrowseOptions): Promise<MessageRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const param = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    if (options.queues) {
      if (options.queues.length === 0) return [];
      where.push(`queue = ANY(${param(options.queues)}::text[])`);
    }
    if (options.states) {
      where.push(`state = ANY(${param(stateList(options.states, MESSAGE_STATES))}::text[])`);
    }
    if (options.backingOff !== undefined) {
      where.push(`(state = 'scheduled' AND delivery_count > 0) = ${options.backingOff ? "true" : "false"}`);
    }
    if (options.subject !== undefined) where.push(`subject = ${param(options.subject)}`);
    if (options.settledBefore !== undefined) {
      where.push(`settled_at > 0 AND settled_at < ${param(options.settledBefore)}::bigint`);
    }
    const order = options.order === "settled" ? "settled_at DESC, id DESC" : "id DESC";
    const limit = Math.min(Math.max(1, Math.trunc(options.limit ?? 100) || 100), MAX_BROWSE);
    const offset = Math.max(0, Math.trunc(options.offset ?? 0) || 0);
    const sql = `SELECT ${RECORD_COLUMNS} FROM messages ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`;
    return (await c.q<RecordRow>(sql, params)).map(toRecord);
  }

  async errors(c: Conn, seq: number): Promise<AttemptError[]> {
    const rows = await c.q<{ seq_number: number; attempt: number; error: string; failed_at: number }>(
      "SELECT seq_number, attempt, error, failed_at FROM message_errors WHERE seq_number = $1 ORDER BY id",
      [seq],
    );
    return rows.map((r) => ({
      seqNumber: r.seq_number,
      attempt: r.attempt,
      error: r.error,
      failedAt: r.failed_at,
    }));
  }

  async cancel(
    c: Conn,
    queue: string,
    seq: number,
    token: string | undefined,
    retainMs: number,
    now: number,
  ): Promise<CancelOutcome> {
    const retain = Math.max(0, retainMs);
    if (token) {
      const held = await c.q(`UPDATE messages SET ${CANCELLED} WHERE ${LIVE_FENCE} RETURNING 1`, [
        seq,
        queue,
        token,
        now,
        retain,
      ]);
      if (held.length === 0) throw new LockLostError();
      return "cancelled";
    }
    const waiting = await c.q(
      `UPDATE messages SET ${CANCELLED}
       WHERE id = $1 AND queue = $2 AND state IN ('active', 'scheduled', 'deferred') AND $3::text IS NULL RETURNING 1`,
      [seq, queue, null, now, retain],
    );
    if (waiting.length > 0) return "cancelled";
    const requested = await c.q(
      "UPDATE messages SET cancel_requested = 1 WHERE id = $1 AND queue = $2 AND state = 'locked' RETURNING 1",
      [seq, queue],
    );
    return requested.length > 0 ? "requested" : "none";
  }

  async setProgress(c: Conn, queue: string, seq: number, token: string, progress: number): Promise<void> {
    if (!token) throw new LockLostError();
    const rows = await c.q(`UPDATE messages SET progress = $4 WHERE ${LIVE_FENCE} RETURNING 1`, [
      seq,
      queue,
      token,
      progress,
    ]);
    if (rows.length === 0) throw new LockLostError();
  }

  async deleteSettled(c: Conn, queue: string, options: DeleteSettledOptions, now: number): Promise<number> {
    const states = stateList(options.states, SETTLED_STATES);
    const olderThan = Math.max(0, options.olderThanMs ?? 0);
    const keep = keepNewest(options.keepNewest);
    const match = `queue = $1 AND state = ANY($2::text[])
         AND ($3::bigint = 0 OR settled_at < $4::bigint)
         AND ($5::bigint[] IS NULL OR id = ANY($5::bigint[]))
         AND ($6::text IS NULL OR subject = $6::text)`;
    // With keepNewest: all but the newest `keep` of the matching rows (retention by count).
    const [row] = await c.q<{ n: number }>(
      `WITH d AS (DELETE FROM messages WHERE ${match}
         AND ($7::bigint IS NULL OR id NOT IN
           (SELECT id FROM messages WHERE ${match} ORDER BY settled_at DESC, id DESC LIMIT $7::bigint))
         RETURNING queue, id, lock_token, state, settled_at), ${KEPT_RECEIPTS("$8::bigint")}
       SELECT count(*)::int AS n FROM d`,
      [
        queue,
        states,
        olderThan,
        now - olderThan,
        options.seqNumbers ?? null,
        options.subject ?? null,
        keep ?? null,
        now - RECEIPT_TTL_MS,
      ],
    );
    return row?.n ?? 0;
  }

  /** Scheduled messages of the queue → active now. Returns how many. */
  async promote(c: Conn, queue: string, seqs: number[], now: number): Promise<number> {
    if (seqs.length === 0) return 0;
    const rows = await c.q(
      `UPDATE messages SET state = 'active', visible_at = $3
       WHERE queue = $1 AND state = 'scheduled' AND id = ANY($2::bigint[]) RETURNING 1`,
      [queue, seqs, now],
    );
    return rows.length;
  }

  /** Deletes messages of the queue that are not locked. Returns the deleted ones' sequence numbers. */
  async remove(c: Conn, queue: string, seqs: number[], now: number): Promise<number[]> {
    if (seqs.length === 0) return [];
    const rows = await c.q<{ id: string | number }>(
      `WITH d AS (DELETE FROM messages WHERE queue = $1 AND state <> 'locked' AND id = ANY($2::bigint[])
         RETURNING queue, id, lock_token, state, settled_at), ${KEPT_RECEIPTS("$3::bigint")}
       SELECT id FROM d`,
      [queue, seqs, now - RECEIPT_TTL_MS],
    );
    return rows.map((r) => Number(r.id));
  }
}

interface WorkerRow {
  id: string;
  info: string;
  started_at: number;
  last_heartbeat: number;
}

function workerRecord(row: WorkerRow): WorkerRecord {
  return {
    ...(JSON.parse(row.info) as WorkerInfo),
    startedAt: row.started_at,
    lastHeartbeat: row.last_heartbeat,
  };
}

/** Worker heartbeats: a heartbeat reaps stale workers in its own transaction, so each is reported once. */
export class PgWorkers {
  async heartbeat(c: Conn, info: WorkerInfo, staleAfterMs: number, now: number): Promise<HeartbeatResult> {
    const [up] = await c.q<{ inserted: boolean }>(
      `INSERT INTO workers (id, info, started_at, last_heartbeat) VALUES ($1, $2, $3, $3)
       ON CONFLICT (id) DO UPDATE SET info = excluded.info, last_heartbeat = excluded.last_heartbeat
       RETURNING (xmax = 0) AS inserted`,
      [info.workerId, JSON.stringify(info), now],
    );
    const reaped = await c.q<WorkerRow>(
      "DELETE FROM workers WHERE last_heartbeat < $1 AND id <> $2 RETURNING *",
      [now - staleAfterMs, info.workerId],
    );
    return { registered: up?.inserted === true, reaped: reaped.map(workerRecord) };
  }

  async list(c: Conn): Promise<WorkerRecord[]> {
    return (await c.q<WorkerRow>('SELECT * FROM workers ORDER BY id COLLATE "C"')).map(workerRecord);
  }

  async delete(c: Conn, id: string): Promise<boolean> {
    return (await c.q("DELETE FROM workers WHERE id = $1 RETURNING 1", [id])).length > 0;
  }
}

/** Named leases: one owner at a time until the lease lapses. */
export class PgNamedLocks {
  async acquire(c: Conn, name: string, owner: string, ttlMs: number, now: number): Promise<boolean> {
    const rows = await c.q(
      `INSERT INTO locks (name, owner, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE locks.owner = excluded.owner OR locks.expires_at <= $4
       RETURNING 1`,
      [name, owner, now + ttlMs, now],
    );
    return rows.length > 0;
  }

  async release(c: Conn, name: string, owner: string, now: number): Promise<boolean> {
    return (
      (
        await c.q("DELETE FROM locks WHERE name = $1 AND owner = $2 AND expires_at > $3 RETURNING 1", [
          name,
          owner,
          now,
        ])
      ).length > 0
    );
  }
}
