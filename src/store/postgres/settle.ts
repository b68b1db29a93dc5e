import { leaseDuration } from "../../core/lease.js";
import { leaseFence } from "../../core/lease-fence.js";
import { MAX_DELIVERY_REASON } from "../../core/limits.js";
import type { Async } from "../../core/port.js";
import { RECEIPT_TTL_MS } from "../../core/receipts.js";
import type {
  Abandoned,
  BatchSettled,
  Fence,
  KeepOptions,
  Outcome,
  Receipt,
  Renewed,
  Settled,
  SettleOps,
} from "../../core/verbs/settle.js";
import { EFFECTIVE_MAX } from "./columns.js";
import type { Conn } from "./db.js";
import { pgName } from "./names.js";

// Every fenced statement takes $1 seq, $2 queue, $3 token, $4 now, $5 operation, $6 receipt args
// ($6 NULL: write no receipt). It changes the row only under the live lease, writes the receipt
// with the change, and looks for an identical earlier request's receipt in the same round trip.
// Concurrent settles of one row serialise on its row lock.
const FENCE = leaseFence({ table: "messages.", seq: "$1", queue: "$2", token: "$3" });
/** The fence of a batch item (`items`, joined): each row is reached by its id. */
const ITEM_FENCE = leaseFence({
  table: "messages.",
  seq: "items.id",
  queue: "$1",
  token: "items.token",
  seekById: true,
});

const RECEIPT = `
  r AS (INSERT INTO settlement_receipts (queue, seq_number, lock_token, operation, args, created_at, expires_at)
        SELECT $2, $1, $3, $5, $6, $4::bigint, $4::bigint + ${RECEIPT_TTL_MS} FROM u WHERE $6::text IS NOT NULL
        ON CONFLICT DO NOTHING)`;

/**
 * A kept completion keeps its lock token: its row answers a replay while a receipt would live. The
 * row is reached by its id alone (see `seekById`): `(queue, state)` would lead to every retained
 * completion of the queue.
 */
const keptCompletion = (seq: string, queue: string, token: string, now: string) => `EXISTS (
  SELECT 1 FROM messages k WHERE k.id = ${seq} AND (k.queue = ${queue} AND k.state = 'completed'
    AND k.lock_token = ${token} AND k.settled_at > ${now} - ${RECEIPT_TTL_MS}) IS TRUE)`;

const REPLAY = `(EXISTS (SELECT 1 FROM settlement_receipts WHERE queue = $2 AND seq_number = $1 AND lock_token = $3
  AND operation = $5 AND args = coalesce($6, '') AND expires_at > $4::bigint)
  OR ($5 = 'completed' AND ${keptCompletion("$1", "$2", "$3", "$4::bigint")}))`;

/** What each `u` returns of where the changed row stood in its queue's order (see `Settled`). */
const GROUPED = "messages.group_id IS NOT NULL AS grouped";

/** Whether a row changed and its queue (the parameter `queue`) is strict FIFO (see `Settled`). */
const strict = (queue: string) =>
  `(EXISTS (SELECT 1 FROM u) AND EXISTS (SELECT 1 FROM queues sq WHERE sq.name = ${queue} AND sq.ordering_mode = 'strict_fifo')) AS strict`;

const OUTCOME = `SELECT (SELECT count(*) FROM u)::int AS n, ${REPLAY} AS replay,
  coalesce((SELECT bool_or(grouped) FROM u), false) AS grouped, ${strict("$2")}`;

const COMPLETE = `
  WITH u AS (DELETE FROM messages WHERE ${FENCE} RETURNING messages.id, ${GROUPED}), ${RECEIPT}
  ${OUTCOME}`;

/** Complete keeping the message (`completed`, with its result, keeping its token) for `$7` ms. */
const KEEP = `
  WITH u AS (
    UPDATE messages SET state = 'completed', result = $8, expires_at = $4 + $7::bigint, settled_at = $4,
      locked_until = 0
    WHERE ${FENCE} RETURNING messages.id, ${GROUPED}), ${RECEIPT}
  ${OUTCOME}`;

/** Records this delivery's error (`$err`) when the settlement applied. */
const recordError = (err: string, attempt = "u.delivery_count") => `
  e AS (INSERT INTO message_errors (seq_number, attempt, error, failed_at)
        SELECT u.id, ${attempt}, ${err}, $4 FROM u WHERE ${err}::text IS NOT NULL)`;

const dead = `messages.delivery_count >= ${EFFECTIVE_MAX}`;

/** Abandon: back to active, parked in scheduled (backoff), or dead-lettered at the delivery limit. */
const ABANDON = `
  WITH q AS (SELECT max_delivery_count FROM queues WHERE name = $2),
  u AS (
    UPDATE messages SET
      state = CASE WHEN ${dead} THEN 'dead_lettered' WHEN $7::bigint > 0 THEN 'scheduled' ELSE 'active' END,
      visible_at = CASE WHEN ${dead} THEN messages.visible_at WHEN $7::bigint > 0 THEN $4 + $7::bigint ELSE $4 END,
      dead_letter_reason = CASE WHEN ${dead} THEN '${MAX_DELIVERY_REASON}' ELSE messages.dead_letter_reason END,
      settled_at = CASE WHEN ${dead} THEN $4 ELSE messages.settled_at END,
      lock_token = NULL, locked_until = 0
    FROM q WHERE ${FENCE}
    RETURNING messages.id, messages.state, messages.visible_at, messages.delivery_count, ${GROUPED}),
  ${RECEIPT}, ${recordError("$8")}
  ${OUTCOME}, (SELECT state FROM u) AS state, (SELECT visible_at FROM u) AS visible_at`;

/** Gives the delivery back (`countDelivery: false`): claimed but never processed. */
const RELEASE = `
  WITH q AS (SELECT 1 FROM queues WHERE name = $2),
  u AS (
    UPDATE messages SET
      state = CASE WHEN $7::bigint > 0 THEN 'scheduled' ELSE 'active' END,
      visible_at = CASE WHEN $7::bigint > 0 THEN $4 + $7::bigint ELSE $4 END,
      delivery_count = greatest(messages.delivery_count - 1, 0), lock_token = NULL, locked_until = 0
    FROM q WHERE ${FENCE}
    RETURNING messages.id, messages.state, messages.visible_at, messages.delivery_count, ${GROUPED}),
  ${RECEIPT}, ${recordError("$8", "u.delivery_count + 1")}
  ${OUTCOME}, (SELECT state FROM u) AS state, (SELECT visible_at FROM u) AS visible_at`;

const REJECT = `
  WITH u AS (
    UPDATE messages SET state = 'dead_lettered', dead_letter_reason = $7, dead_letter_description = $8,
      settled_at = $4, lock_token = NULL, locked_until = 0
    WHERE ${FENCE} RETURNING messages.id, messages.delivery_count, ${GROUPED}), ${RECEIPT}, ${recordError("$9")}
  ${OUTCOME}`;

const DEFER = `
  WITH u AS (
    UPDATE messages SET state = 'deferred', lock_token = NULL, locked_until = 0
    WHERE ${FENCE} RETURNING messages.id, ${GROUPED}), ${RECEIPT}
  ${OUTCOME}`;

const FIND_RECEIPT = `SELECT ${REPLAY} AS replay`;

/** The renewed lease's end (see `leaseDuration`); a renewal never shortens a lease. */
const renewed = (now: string, cap: string) => `greatest(messages.locked_until,
  ${now} + ${leaseDuration({ own: "messages.lock_duration_ms", queue: "q.lock", cap })})`;

const RENEW = `
  WITH q AS (SELECT lock_duration_ms AS lock FROM queues WHERE name = $2),
  u AS (UPDATE messages SET locked_until = ${renewed("$4::bigint", "$5::bigint")}
        FROM q WHERE ${FENCE} RETURNING messages.locked_until, messages.cancel_requested)
  SELECT (SELECT count(*) FROM q)::int AS found, u.locked_until, u.cancel_requested
  FROM (SELECT 1) AS one LEFT JOIN u ON true`;

const RENEW_BATCH = `
  WITH q AS (SELECT lock_duration_ms AS lock FROM queues WHERE name = $1),
  items AS (SELECT * FROM unnest($2::bigint[], $3::text[]) AS i(id, token)),
  u AS (UPDATE messages SET locked_until = ${renewed("$4::bigint", "$5::bigint")}
        FROM q, items
        WHERE ${ITEM_FENCE}
        RETURNING messages.id, messages.lock_token, messages.locked_until, messages.cancel_requested)
  SELECT (SELECT count(*) FROM q)::int AS found, u.id, u.lock_token, u.locked_until, u.cancel_requested
  FROM (SELECT 1) AS one LEFT JOIN u ON true`;

/**
 * Items with a retention are kept as `completed` (keeping their token); the others are deleted.
 * `$7` says per item whether to write a receipt.
 */
const COMPLETE_BATCH = `
  WITH items AS (SELECT * FROM unnest($2::bigint[], $3::text[], $5::bigint[], $6::bytea[], $7::boolean[])
                 WITH ORDINALITY AS i(id, token, retain, result, receipt, ord)),
  d AS (DELETE FROM messages USING items
        WHERE items.retain = 0 AND ${ITEM_FENCE}
        RETURNING messages.id, messages.lock_token, items.receipt, ${GROUPED}),
  k AS (UPDATE messages SET state = 'completed', result = items.result, expires_at = $4 + items.retain,
          settled_at = $4, locked_until = 0
        FROM items
        WHERE items.retain > 0 AND ${ITEM_FENCE}
        RETURNING messages.id, items.token AS lock_token, items.receipt, ${GROUPED}),
  u AS (SELECT * FROM d UNION ALL SELECT * FROM k),
  r AS (INSERT INTO settlement_receipts (queue, seq_number, lock_token, operation, args, created_at, expires_at)
        SELECT $1, u.id, u.lock_token, 'completed', '', $4, $4 + ${RECEIPT_TTL_MS} FROM u WHERE u.receipt
        ON CONFLICT DO NOTHING)
  SELECT items.ord, u.id IS NOT NULL AS applied, (u.id IS NULL AND (EXISTS (
           SELECT 1 FROM settlement_receipts s WHERE s.queue = $1 AND s.seq_number = items.id
             AND s.lock_token = items.token AND s.operation = 'completed' AND s.args = '' AND s.expires_at > $4)
           OR ${keptCompletion("items.id", "$1", "items.token", "$4::bigint")})) AS replay,
         coalesce((SELECT bool_or(grouped) FROM u), false) AS grouped, ${strict("$1")}
  FROM items LEFT JOIN u ON u.id = items.id AND u.lock_token = items.token
  ORDER BY items.ord`;

type OutcomeRow = { n: number; replay: boolean; grouped: boolean; strict: boolean };

const outcome = (row: OutcomeRow | undefined): Outcome =>
  row && row.n > 0 ? "applied" : row?.replay ? "replayed" : "missed";

const settled = (row: OutcomeRow | undefined): Settled => ({
  outcome: outcome(row),
  grouped: row?.grouped === true,
  strict: row?.strict === true,
});

/** The settlement statements on PostgreSQL (the rules are in core/verbs/settle.ts), on one connection. */
export class PgSettleOps implements Async<SettleOps> {
  constructor(private readonly c: Conn) {}

  private async fenced<R extends OutcomeRow>(
    sql: string,
    f: Fence,
    receipt: Receipt | undefined,
    operation: string,
    extra: unknown[] = [],
  ): Promise<R | undefined> {
    const [row] = await this.c.q<R>(sql, [
      f.seq,
      pgName(f.queue),
      f.token,
      f.now,
      operation,
      receipt ? receipt.args : null,
      ...extra,
    ]);
    return row;
  }

  async complete(a: Fence & { keep?: KeepOptions; receipt?: Receipt }): Promise<Settled> {
    const row = a.keep
      ? await this.fenced(KEEP, a, a.receipt, "completed", [a.keep.retainMs, a.keep.result])
      : await this.fenced(COMPLETE, a, a.receipt, "completed");
    return settled(row);
  }

  async completeBatch(a: {
    queue: string;
    now: number;
    items: { seq: number; token: string; keep?: KeepOptions; receipt?: Receipt }[];
  }): Promise<BatchSettled> {
    const rows = await this.c.q<Omit<OutcomeRow, "n"> & { ord: number; applied: boolean }>(COMPLETE_BATCH, [
      pgName(a.queue),
      a.items.map((i) => i.seq),
      a.items.map((i) => i.token),
      a.now,
      a.items.map((i) => i.keep?.retainMs ?? 0),
      a.items.map((i) => i.keep?.result ?? null),
      a.items.map((i) => i.receipt !== undefined),
    ]);
    const outcomes: Outcome[] = a.items.map(() => "missed");
    for (const r of rows) outcomes[r.ord - 1] = r.applied ? "applied" : r.replay ? "replayed" : "missed";
    return { outcomes, grouped: rows[0]?.grouped === true, strict: rows[0]?.strict === true };
  }

  async abandon(
    a: Fence & { delayMs: number; countDelivery: boolean; error: string | null; receipt: Receipt },
  ): Promise<Abandoned> {
    const row = await this.fenced<
      OutcomeRow & { state: Abandoned["state"] | null; visible_at: number | null }
    >(a.countDelivery ? ABANDON : RELEASE, a, a.receipt, a.receipt.operation, [a.delayMs, a.error]);
    const o = outcome(row);
    if (o !== "applied" || !row) return { outcome: o };
    return {
      outcome: o,
      state: row.state ?? undefined,
      visibleAt: row.visible_at ?? undefined,
      grouped: row.grouped,
      strict: row.strict,
    };
  }

  async reject(
    a: Fence & { reason: string; description: string | null; error: string | null; receipt: Receipt },
  ): Promise<Settled> {
    return settled(
      await this.fenced(REJECT, a, a.receipt, a.receipt.operation, [a.reason, a.description, a.error]),
    );
  }

  async defer(a: Fence & { receipt: Receipt }): Promise<Outcome> {
    return outcome(await this.fenced(DEFER, a, a.receipt, a.receipt.operation));
  }

  async hasReceipt(a: Fence & Receipt): Promise<boolean> {
    const [row] = await this.c.q<{ replay: boolean }>(FIND_RECEIPT, [
      a.seq,
      pgName(a.queue),
      a.token,
      a.now,
      a.operation,
      a.args,
    ]);
    return row?.replay === true;
  }

  async renew(a: Fence & { capMs: number }): Promise<Renewed | null | undefined> {
    const [row] = await this.c.q<{
      found: number;
      locked_until: number | null;
      cancel_requested: number | null;
    }>(RENEW, [a.seq, pgName(a.queue), a.token, a.now, a.capMs]);
    if (!row || row.found === 0) return undefined;
    if (!a.token || row.locked_until === null) return null;
    return { lockedUntil: row.locked_until, cancelRequested: row.cancel_requested === 1 };
  }

  async renewBatch(a: {
    queue: string;
    now: number;
    capMs: number;
    items: { seq: number; token: string }[];
  }): Promise<(Renewed | null)[] | undefined> {
    const rows = await this.c.q<{
      found: number;
      id: number | null;
      lock_token: string;
      locked_until: number;
      cancel_requested: number;
    }>(RENEW_BATCH, [
      pgName(a.queue),
      a.items.map((i) => i.seq),
      a.items.map((i) => i.token),
      a.now,
      a.capMs,
    ]);
    if ((rows[0]?.found ?? 0) === 0) return undefined;
    const got = new Map<string, Renewed>();
    for (const r of rows) {
      if (r.id !== null)
        got.set(`${r.id}\u0000${r.lock_token}`, {
          lockedUntil: r.locked_until,
          cancelRequested: r.cancel_requested === 1,
        });
    }
    return a.items.map((i) => (i.token ? (got.get(`${i.seq}\u0000${i.token}`) ?? null) : null));
  }
}
