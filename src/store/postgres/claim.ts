import { createHash } from "node:crypto";
import type { Message, ReceiveMode } from "../../contract/types.js";
import { leaseDuration } from "../../core/lease.js";
import { RECEIVE_BODY_BUDGET } from "../../core/limits.js";
import { decodeMessages, encodeMessages } from "../../core/message-codec.js";
import { deliveredMessage, type MessageRow } from "../../core/message-row.js";
import { newLockToken } from "../../core/tokens.js";
import { DELIVERY_COLUMNS } from "./columns.js";
import type { Conn } from "./db.js";
import type { GateSession } from "./gates.js";
import { lockAll, xactLockKey } from "./locks.js";
import type { PgQueueRow } from "./queue-registry.js";

/** How long a receive attempt's record replays at least (ms). */
const ATTEMPT_MIN_TTL_MS = 300_000;

const RETURNED = DELIVERY_COLUMNS.split(", ")
  .map((c) => `messages.${c}`)
  .join(", ");

/** An earlier in-flight row in the same line blocks the candidate `m` (one probe per state, each an index seek). */
const blockedBy = (sameLine: string, state: string) =>
  `EXISTS (SELECT 1 FROM messages b WHERE b.queue = m.queue ${sameLine} AND b.state = '${state}' AND b.id < m.id)`;

/**
 * Head-of-line rules, as on SQLite. A grouped message waits for every earlier same-group row that is
 * locked (expired or not), deferred, scheduled, or active and unexpired; strict FIFO applies the
 * in-flight probes queue-wide.
 *
 * Under concurrency: the rules are evaluated on one statement snapshot, and a group's earlier active
 * row blocks its successors, so the claimable set holds at most one row per group; `FOR UPDATE SKIP
 * LOCKED` hands each claimable row to one claimer. Sends into a group (and into a strict queue) hold
 * that group's (queue's) advisory lock to commit, so ids within a line follow commit order and no
 * earlier row can appear behind a claim. Strict claims also serialise on the queue's lock, because
 * the strict rule does not look at earlier active rows.
 */
const groupRule = `(m.group_id IS NULL OR NOT (
  ${blockedBy("AND b.group_id = m.group_id", "locked")} OR
  ${blockedBy("AND b.group_id = m.group_id", "deferred")} OR
  ${blockedBy("AND b.group_id = m.group_id", "scheduled")} OR
  EXISTS (SELECT 1 FROM messages b WHERE b.queue = m.queue AND b.group_id = m.group_id AND b.state = 'active'
          AND b.id < m.id AND (b.expires_at = 0 OR b.expires_at > $2))))`;

const strictRule = `NOT (${blockedBy("", "locked")} OR ${blockedBy("", "deferred")} OR ${blockedBy("", "scheduled")} OR
  EXISTS (SELECT 1 FROM messages b WHERE b.queue = m.queue AND b.state = 'active'
          AND b.id < m.id AND (b.expires_at = 0 OR b.expires_at > $2)))`;

/** The lease's end (see `leaseDuration`) from `now`, the queue's lock duration and the claim's cap. */
const lease = (now: string, lock: string, cap: string) =>
  `${now} + ${leaseDuration({ own: "messages.lock_duration_ms", queue: `${lock}::bigint`, cap: `${cap}::bigint` })}`;

const claimable =
  "m.queue = $1 AND m.state = 'active' AND m.visible_at <= $2 AND (m.expires_at = 0 OR m.expires_at > $2)";

/**
 * A peek-lock batch on a standard or group_fifo queue in one statement: the top claimable rows
 * (priority, then seq), skipping rows another transaction holds, up to the body budget (the row that
 * crosses it is kept), each with its own token. `$6` is the config version the caller's cached queue
 * row has: when it is no longer current, nothing is claimed and `fresh` is 0.
 */
const claimBatchSql = (guard: string) => `
  WITH g AS (SELECT 1 FROM queues WHERE name = $1 AND version = $6${guard}),
  c AS (
    SELECT m.id, m.priority, octet_length(m.body) AS len FROM messages m
    WHERE EXISTS (SELECT 1 FROM g) AND ${claimable} AND ${groupRule}
    ORDER BY m.priority DESC, m.id
    LIMIT $3
    FOR UPDATE OF m SKIP LOCKED
  ),
  n AS (
    SELECT id, (row_number() OVER w)::int AS rn,
           coalesce(sum(len) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
    FROM c WINDOW w AS (ORDER BY priority DESC, id)
  ),
  u AS (
    UPDATE messages SET state = 'locked', locked_until = ${lease("$2", "$4", "$7")}, lock_token = ($5::text[])[n.rn],
      delivery_count = messages.delivery_count + 1, delivered_at = $2
    FROM n WHERE messages.id = n.id AND n.before < ${RECEIVE_BODY_BUDGET}
    RETURNING ${RETURNED}
  )
  SELECT (SELECT count(*) FROM g)::int AS fresh, u.* FROM (SELECT 1) AS one LEFT JOIN u ON true
  ORDER BY u.priority DESC, u.id`;

const CLAIM_BATCH = claimBatchSql("");
/**
 * The same batch as a transaction of its own that commits without waiting for its WAL flush
 * (`synchronous_commit` off, for this transaction only). A claim lost in a server crash leaves its
 * messages claimable, as a lapsed lease would (delivery stays at least once), and the completion
 * that follows a claim is a durable commit, which flushes the claim's WAL record before its own.
 */
const CLAIM_BATCH_RELAXED = claimBatchSql(" AND set_config('synchronous_commit', 'off', true) IS NOT NULL");

/** One claim (the strict rule, or the group rule) inside a transaction, for loops of single claims. */
function claimOneSql(rule: string, order: string, skipLocked: boolean): string {
  return `
  WITH c AS (
    SELECT m.id FROM messages m
    WHERE ${claimable} AND ${rule} AND (m.subject IS NULL OR m.subject <> ALL ($5::text[]))
    ORDER BY ${order}
    LIMIT 1
    FOR UPDATE OF m${skipLocked ? " SKIP LOCKED" : ""}
  )
  UPDATE messages SET state = 'locked', locked_until = ${lease("$2", "$3", "$6")}, lock_token = $4,
    delivery_count = messages.delivery_count + 1, delivered_at = $2
  FROM c WHERE messages.id = c.id
  RETURNING ${RETURNED}`;
}

const CLAIM_ONE_GROUPED = claimOneSql(groupRule, "m.priority DESC, m.id", true);
// Strict claims go in sequence order whatever priority the rows carry (a queue turned strict, a
// redrive), and hold the queue's lock, so they wait for a row being settled instead of skipping it.
const CLAIM_ONE_STRICT = claimOneSql(strictRule, "m.id", false);

const DELETE_CLAIMED = "DELETE FROM messages WHERE id = $1 AND lock_token = $2";

const FIND_ATTEMPT =
  "SELECT response FROM receive_attempts WHERE queue = $1 AND attempt_id = $2 AND expires_at > $3";
const SAVE_ATTEMPT = `
  INSERT INTO receive_attempts (queue, attempt_id, response, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (queue, attempt_id) DO UPDATE SET response = excluded.response,
    created_at = excluded.created_at, expires_at = excluded.expires_at`;

const CLAIM_DEFERRED = `
  UPDATE messages SET state = 'locked',
    locked_until = ${lease("$5", "$3", "0")},
    lock_token = ($4::text[])[s.ord], delivery_count = messages.delivery_count + 1, delivered_at = $5
  FROM unnest($1::bigint[]) WITH ORDINALITY AS s(id, ord)
  WHERE messages.id = s.id AND messages.queue = $2 AND messages.state = 'deferred'
  RETURNING s.ord, ${RETURNED}`;

/** The attempt id as stored (a very long id is stored as its hash: index rows are bounded). */
function attemptKey(id: string): string {
  return id.length > 512 ? `sha256:${createHash("sha256").update(id).digest("hex")}` : id;
}

/** Claims, receive-and-delete, receive attempts and receive-deferred on PostgreSQL. */
export class PgClaimer {
  constructor(private readonly schema: string) {}

  /**
   * The one-statement peek-lock batch for a standard or group_fifo queue, guarded by the cached
   * row's version. `fresh: false` means the cached row is stale and nothing was claimed. `alone`:
   * the statement is its whole transaction (autocommit), which then does not wait for its flush.
   */
  async claimBatch(
    c: Conn,
    q: PgQueueRow,
    max: number,
    now: number,
    leaseCapMs = 0,
    alone = false,
  ): Promise<{ fresh: boolean; messages: Message[] }> {
    if (q.paused) return { fresh: await this.isFresh(c, q), messages: [] };
    const tokens = Array.from({ length: max }, newLockToken);
    const rows = await c.q<MessageRow & { fresh: number }>(alone ? CLAIM_BATCH_RELAXED : CLAIM_BATCH, [
      q.name,
      now,
      max,
      q.lock_duration_ms,
      tokens,
      q.version,
      leaseCapMs,
    ]);
    const fresh = (rows[0]?.fresh ?? 0) > 0;
    return { fresh, messages: rows.filter((r) => r.id !== null).map((r) => deliveredMessage(r)) };
  }

  private async isFresh(c: Conn, q: PgQueueRow): Promise<boolean> {
    return (
      (await c.q("SELECT 1 FROM queues WHERE name = $1 AND version = $2", [q.name, q.version])).length > 0
    );
  }

  /**
   * The general claim inside a transaction: strict queues (under the queue's lock),
   * receive-and-delete (a deleted head frees its line within the batch, as on SQLite), and receive
   * attempts (under the attempt's lock, so a retry replays instead of claiming again).
   */
  async claimTx(
    c: Conn,
    q: PgQueueRow,
    max: number,
    mode: ReceiveMode,
    now: number,
    attemptId?: string,
    gates?: GateSession,
    leaseCapMs = 0,
  ): Promise<Message[]> {
    const strict = q.ordering_mode === "strict_fifo";
    const keys: bigint[] = [];
    if (strict) keys.push(xactLockKey(this.schema, "queue", q.name));
    if (attemptId) keys.push(xactLockKey(this.schema, "attempt", q.name, attemptId));
    await lockAll(c, keys);
    if (attemptId) {
      const [seen] = await c.q<{ response: string }>(FIND_ATTEMPT, [q.name, attemptKey(attemptId), now]);
      if (seen) return decodeMessages(seen.response);
    }
    if (q.paused) return [];
    let out: Message[] = [];
    if (!strict && mode === "peek-lock" && !gates) {
      // The caller read `q` in this transaction, so its version is current.
      out = (await this.claimBatch(c, q, max, now, leaseCapMs)).messages;
    } else {
      const sql = strict ? CLAIM_ONE_STRICT : CLAIM_ONE_GROUPED;
      let bytes = 0;
      while (out.length < max && bytes < RECEIVE_BODY_BUDGET) {
        const token = newLockToken();
        const [row] = await c.q<MessageRow>(sql, [
          q.name,
          now,
          q.lock_duration_ms,
          token,
          gates?.excluded() ?? [],
          leaseCapMs,
        ]);
        if (!row) break;
        gates?.claimed(row.subject);
        if (mode === "receive-and-delete") {
          await c.q(DELETE_CLAIMED, [row.id, token]);
          out.push(deliveredMessage(row, false));
        } else {
          out.push(deliveredMessage(row));
        }
        bytes += row.body.length;
      }
    }
    if (attemptId && out.length > 0) {
      const ttl = Math.max(q.lock_duration_ms, ATTEMPT_MIN_TTL_MS);
      await c.q(SAVE_ATTEMPT, [q.name, attemptKey(attemptId), encodeMessages(out), now, now + ttl]);
    }
    return out;
  }

  /** Locks the given deferred messages (others are skipped), in the order asked. */
  async claimDeferred(c: Conn, q: PgQueueRow, seqs: number[], now: number): Promise<Message[]> {
    const unique = [...new Set(seqs)];
    if (unique.length === 0) return [];
    const rows = await c.q<MessageRow & { ord: number }>(CLAIM_DEFERRED, [
      unique,
      q.name,
      q.lock_duration_ms,
      unique.map(() => newLockToken()),
      now,
    ]);
    return rows.sort((a, b) => a.ord - b.ord).map((r) => deliveredMessage(r));
  }
}
