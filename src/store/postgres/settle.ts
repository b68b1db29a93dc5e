import { LockLostError, NotFoundError } from "../../contract/errors.js";
import type { CompleteResult, LockRef, RenewResult } from "../../contract/types.js";
import { leaseDuration } from "../../core/lease.js";
import { leaseFence } from "../../core/lease-fence.js";
import { DEFAULT_REJECT_REASON, MAX_DELIVERY_REASON } from "../../core/limits.js";
import { RECEIPT_TTL_MS, receiptArgs, type SettleOperation } from "../../core/receipts.js";
import { EFFECTIVE_MAX } from "./columns.js";
import type { Conn } from "./db.js";

const FENCE = leaseFence({ table: "messages.", seq: "$1", queue: "$2", token: "$3" });
/** The fence of a batch item (`items`, joined). */
const ITEM_FENCE = leaseFence({ table: "messages.", seq: "items.id", queue: "$1", token: "items.token" });

/** Writes the receipt of whatever `u` changed, and looks for the receipt of an identical earlier request. */
const RECEIPT = `
  r AS (INSERT INTO settlement_receipts (queue, seq_number, lock_token, operation, args, created_at, expires_at)
        SELECT $2, $1, $3, $5, $6, $4::bigint, $4::bigint + ${RECEIPT_TTL_MS} FROM u ON CONFLICT DO NOTHING)`;
const REPLAY = `EXISTS (SELECT 1 FROM settlement_receipts WHERE queue = $2 AND seq_number = $1 AND lock_token = $3
  AND operation = $5 AND args = $6 AND expires_at > $4::bigint)`;

const COMPLETE = `
  WITH u AS (DELETE FROM messages WHERE ${FENCE} RETURNING messages.id), ${RECEIPT}
  SELECT (SELECT count(*) FROM u)::int AS n, ${REPLAY} AS replay`;

/** Complete keeping the message (`completed`, with its result) for `$7` ms. */
const KEEP = `
  WITH u AS (
    UPDATE messages SET state = 'completed', result = $8, expires_at = $4 + $7::bigint, settled_at = $4,
      lock_token = NULL, locked_until = 0
    WHERE ${FENCE} RETURNING messages.id), ${RECEIPT}
  SELECT (SELECT count(*) FROM u)::int AS n, ${REPLAY} AS replay`;

/** Records this delivery's error (`$err`) when the settlement applied. */
const recordError = (err: string, attempt = "u.delivery_count") => `
  e AS (INSERT INTO message_errors (seq_number, attempt, error, failed_at)
        SELECT u.id, ${attempt}, ${err}, $4 FROM u WHERE ${err}::text IS NOT NULL)`;

const dead = `messages.delivery_count >= ${EFFECTIVE_MAX}`;

/** Abandon: back to active, parked in scheduled (backoff), or dead-lettered at the delivery limit; wakes or arms on commit. */
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
    RETURNING messages.id, messages.state, messages.visible_at, messages.delivery_count),
  ${RECEIPT}, ${recordError("$8")}
  SELECT (SELECT count(*) FROM u)::int AS n, ${REPLAY} AS replay,
         (SELECT state FROM u) AS state, (SELECT visible_at FROM u) AS visible_at`;

/** Gives the delivery back (`countDelivery: false`): claimed but never processed. */
const RELEASE = `
  WITH q AS (SELECT 1 FROM queues WHERE name = $2),
  u AS (
    UPDATE messages SET
      state = CASE WHEN $7::bigint > 0 THEN 'scheduled' ELSE 'active' END,
      visible_at = CASE WHEN $7::bigint > 0 THEN $4 + $7::bigint ELSE $4 END,
      delivery_count = greatest(messages.delivery_count - 1, 0), lock_token = NULL, locked_until = 0
    FROM q WHERE ${FENCE}
    RETURNING messages.id, messages.state, messages.visible_at, messages.delivery_count),
  ${RECEIPT}, ${recordError("$8", "u.delivery_count + 1")}
  SELECT (SELECT count(*) FROM u)::int AS n, ${REPLAY} AS replay,
         (SELECT state FROM u) AS state, (SELECT visible_at FROM u) AS visible_at`;

const REJECT = `
  WITH u AS (
    UPDATE messages SET state = 'dead_lettered', dead_letter_reason = $7, dead_letter_description = $8,
      settled_at = $4, lock_token = NULL, locked_until = 0
    WHERE ${FENCE} RETURNING messages.id, messages.delivery_count), ${RECEIPT}, ${recordError("$9")}
  SELECT (SELECT count(*) FROM u)::int AS n, ${REPLAY} AS replay`;

const DEFER = `
  WITH u AS (
    UPDATE messages SET state = 'deferred', lock_token = NULL, locked_until = 0
    WHERE ${FENCE} RETURNING messages.id), ${RECEIPT}
  SELECT (SELECT count(*) FROM u)::int AS n, ${REPLAY} AS replay`;

const FIND_RECEIPT = `SELECT ${REPLAY} AS replay`;

/** The renewed lease's end (see `leaseDuration`); a renewal never shortens a lease. */
const renewed = (now: string, cap: string) => `greatest(messages.locked_until,
  ${now} + ${leaseDuration({ own: "messages.lock_duration_ms", queue: "q.lock", cap })})`;

const RENEW = `
  WITH q AS (SELECT lock_duration_ms AS lock FROM queues WHERE name = $2),
  u AS (UPDATE messages SET locked_until = ${renewed("$4", "0")}
        FROM q WHERE ${FENCE} RETURNING messages.locked_until)
  SELECT (SELECT count(*) FROM q)::int AS found, (SELECT locked_until FROM u) AS locked_until`;

const RENEW_BATCH = `
  WITH q AS (SELECT lock_duration_ms AS lock FROM queues WHERE name = $1),
  items AS (SELECT * FROM unnest($2::bigint[], $3::text[]) AS i(id, token)),
  u AS (UPDATE messages SET locked_until = ${renewed("$4::bigint", "$5::bigint")}
        FROM q, items
        WHERE ${ITEM_FENCE}
        RETURNING messages.id, messages.lock_token, messages.locked_until, messages.cancel_requested)
  SELECT (SELECT count(*) FROM q)::int AS found, u.id, u.lock_token, u.locked_until, u.cancel_requested
  FROM (SELECT 1) AS one LEFT JOIN u ON true`;

/** Items with a retention are kept as `completed`; the others are deleted. */
const COMPLETE_BATCH = `
  WITH items AS (SELECT * FROM unnest($2::bigint[], $3::text[], $5::bigint[], $6::bytea[])
                 WITH ORDINALITY AS i(id, token, retain, result, ord)),
  d AS (DELETE FROM messages USING items
        WHERE items.retain = 0 AND ${ITEM_FENCE}
        RETURNING messages.id, messages.lock_token),
  k AS (UPDATE messages SET state = 'completed', result = items.result, expires_at = $4 + items.retain,
          settled_at = $4, lock_token = NULL, locked_until = 0
        FROM items
        WHERE items.retain > 0 AND ${ITEM_FENCE}
        RETURNING messages.id, items.token AS lock_token),
  u AS (SELECT * FROM d UNION ALL SELECT * FROM k),
  r AS (INSERT INTO settlement_receipts (queue, seq_number, lock_token, operation, args, created_at, expires_at)
        SELECT $1, u.id, u.lock_token, 'completed', '', $4, $4 + ${RECEIPT_TTL_MS} FROM u ON CONFLICT DO NOTHING)
  SELECT items.ord, (u.id IS NOT NULL OR EXISTS (
           SELECT 1 FROM settlement_receipts s WHERE s.queue = $1 AND s.seq_number = items.id
             AND s.lock_token = items.token AND s.operation = 'completed' AND s.args = '' AND s.expires_at > $4)) AS ok,
         (SELECT count(*) FROM u)::int AS completed
  FROM items LEFT JOIN u ON u.id = items.id AND u.lock_token = items.token
  ORDER BY items.ord`;

const CANCEL =
  "DELETE FROM messages WHERE id = $1 AND queue = $2 AND state = 'scheduled' AND delivery_count = 0 RETURNING 1";

/** What a settlement did. */
export interface PgSettleEffect {
  /** A row was deleted by Complete (count it). */
  completed?: boolean;
  /** The message became claimable now (wake local waiters). */
  activated?: boolean;
  /** The message was parked until this time. */
  scheduledFor?: number;
  /** The message reached a final state (wake `awaitSettled`). */
  settled?: boolean;
}

/** What `complete` keeps: the message stays `completed` with its result for `retainMs`. */
export interface PgKeep {
  retainMs: number;
  result: Buffer | null;
}

/**
 * Fenced settlement on PostgreSQL: each verb is one statement that changes the row only while the
 * caller holds the live lease and writes the receipt with it; an exact replay is answered from the
 * receipt. Concurrent settles of one row serialise on its row lock.
 */
export class PgSettler {
  private async fenced(
    c: Conn,
    sql: string,
    queue: string,
    seq: number,
    token: string,
    now: number,
    op: SettleOperation,
    args: string,
    extra: unknown[] = [],
  ): Promise<Record<string, unknown>> {
    if (!token) throw new LockLostError();
    const [row] = await c.q<{ n: number; replay: boolean } & Record<string, unknown>>(sql, [
      seq,
      queue,
      token,
      now,
      op,
      args,
      ...extra,
    ]);
    if (row && row.n > 0) return row;
    if (row?.replay) return { n: 0 };
    // A concurrent identical request may have committed while this statement waited: look again.
    const [again] = await c.q<{ replay: boolean }>(FIND_RECEIPT, [seq, queue, token, now, op, args]);
    if (again?.replay) return { n: 0 };
    throw new LockLostError();
  }

  async complete(
    c: Conn,
    queue: string,
    seq: number,
    token: string,
    now: number,
    keep?: PgKeep,
  ): Promise<PgSettleEffect> {
    const row = keep
      ? await this.fenced(c, KEEP, queue, seq, token, now, "completed", "", [keep.retainMs, keep.result])
      : await this.fenced(c, COMPLETE, queue, seq, token, now, "completed", "");
    const applied = (row.n as number) > 0;
    return { completed: applied, settled: applied };
  }

  async completeBatch(
    c: Conn,
    queue: string,
    items: (LockRef & { keep?: PgKeep })[],
    now: number,
  ): Promise<{ results: CompleteResult[]; completed: number }> {
    const live = items.filter((i) => i.lockToken);
    const ok = new Map<number, boolean>();
    let completed = 0;
    if (live.length > 0) {
      const rows = await c.q<{ ord: number; ok: boolean; completed: number }>(COMPLETE_BATCH, [
        queue,
        live.map((i) => i.seqNumber),
        live.map((i) => i.lockToken),
        now,
        live.map((i) => i.keep?.retainMs ?? 0),
        live.map((i) => i.keep?.result ?? null),
      ]);
      for (const r of rows) ok.set(r.ord - 1, r.ok);
      completed = rows[0]?.completed ?? 0;
    }
    let k = 0;
    const results = items.map(({ seqNumber, lockToken }) => {
      if (!lockToken) return { seqNumber, ok: false };
      return { seqNumber, ok: ok.get(k++) === true };
    });
    return { results, completed };
  }

  async abandon(
    c: Conn,
    queue: string,
    seq: number,
    token: string,
    delay: number,
    now: number,
    countDelivery = true,
    error?: string,
  ): Promise<PgSettleEffect> {
    const args = countDelivery ? receiptArgs(delay) : receiptArgs(delay, "released");
    const row = await this.fenced(
      c,
      countDelivery ? ABANDON : RELEASE,
      queue,
      seq,
      token,
      now,
      "abandoned",
      args,
      [delay, error || null],
    );
    if ((row.n as number) === 0) return {};
    if (row.state === "active") return { activated: true };
    if (row.state === "scheduled") return { scheduledFor: row.visible_at as number };
    return { settled: true };
  }

  async reject(
    c: Conn,
    queue: string,
    seq: number,
    token: string,
    reason: string,
    description: string,
    now: number,
    error?: string,
  ): Promise<PgSettleEffect> {
    const why = reason || DEFAULT_REJECT_REASON;
    const row = await this.fenced(
      c,
      REJECT,
      queue,
      seq,
      token,
      now,
      "dead_lettered",
      receiptArgs(why, description),
      [why, description || null, error || null],
    );
    return { settled: (row.n as number) > 0 };
  }

  async defer(c: Conn, queue: string, seq: number, token: string, now: number): Promise<void> {
    await this.fenced(c, DEFER, queue, seq, token, now, "deferred", "");
  }

  /** Renewals have no receipts: a renew after a settlement is `lock_lost`. Returns the new deadline. */
  async renew(c: Conn, queue: string, seq: number, token: string, now: number): Promise<number> {
    const [row] = await c.q<{ found: number; locked_until: number | null }>(RENEW, [seq, queue, token, now]);
    if (!row || row.found === 0) throw new NotFoundError("mqlite: queue not found");
    if (!token || row.locked_until === null) throw new LockLostError();
    return row.locked_until;
  }

  /** Renews each lock; `leaseCapMs` (0: none) caps the lease each one gets. */
  async renewBatch(
    c: Conn,
    queue: string,
    items: LockRef[],
    now: number,
    leaseCapMs = 0,
  ): Promise<RenewResult[]> {
    const rows = await c.q<{
      found: number;
      id: number | null;
      lock_token: string;
      locked_until: number;
      cancel_requested: number;
    }>(RENEW_BATCH, [
      queue,
      items.map((i) => i.seqNumber),
      items.map((i) => i.lockToken ?? ""),
      now,
      leaseCapMs,
    ]);
    if ((rows[0]?.found ?? 0) === 0) throw new NotFoundError("mqlite: queue not found");
    const renewed = new Map<string, { until: number; cancel: boolean }>();
    for (const r of rows) {
      if (r.id !== null)
        renewed.set(`${r.id}\u0000${r.lock_token}`, {
          until: r.locked_until,
          cancel: r.cancel_requested === 1,
        });
    }
    return items.map(({ seqNumber, lockToken }) => {
      const got = lockToken ? renewed.get(`${seqNumber}\u0000${lockToken}`) : undefined;
      if (!got || got.until <= now) return { seqNumber, ok: false };
      const out: RenewResult = { seqNumber, ok: true, lockedUntil: got.until };
      if (got.cancel) out.cancelRequested = true;
      return out;
    });
  }

  /** Deletes a never-delivered scheduled message; false when there is none. */
  async cancel(c: Conn, queue: string, seq: number): Promise<boolean> {
    return (await c.q(CANCEL, [seq, queue])).length > 0;
  }
}
