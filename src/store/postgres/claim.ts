import { createHash } from "node:crypto";
import { MESSAGE_STATES, type Message, type MessageState } from "../../contract/types.js";
import { leaseDuration } from "../../core/lease.js";
import { deliveredMessage, type MessageRow, PEEK_COLUMNS } from "../../core/message-row.js";
import type { Async } from "../../core/port.js";
import type { QueueRow } from "../../core/queue-config.js";
import { newLockToken } from "../../core/tokens.js";
import type { ClaimOps, ClaimRequest } from "../../core/verbs/claim.js";
import { DELIVERY_COLUMNS } from "./columns.js";
import type { Conn } from "./db.js";
import { lockAll, xactLockKey } from "./locks.js";
import { pgName } from "./names.js";
import type { PgQueueRegistry, PgQueueRow } from "./queue-registry.js";
import { Rerun } from "./rerun.js";

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
export const groupRule = `(m.group_id IS NULL OR NOT (
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

/** A claimable row `m` of queue `$1` at `$2` (a send's hand-off asks for one too). */
export const claimable =
  "m.queue = $1 AND m.state = 'active' AND m.visible_at <= $2 AND (m.expires_at = 0 OR m.expires_at > $2)";

/**
 * A peek-lock batch on a standard or group_fifo queue in one statement: the top claimable rows
 * (priority, then seq), skipping rows another transaction holds, up to the body budget (the row that
 * crosses it is kept; `$8`), each with its own token. `$6` is the config version the caller's cached
 * queue row has: when it is no longer current, nothing is claimed and `fresh` is 0.
 */
const claimBatchSql = (guard: string) => `
  WITH g AS (SELECT 1 FROM queues WHERE name = $1 AND version = $6${guard}),
  c AS (
    SELECT m.id, m.priority, octet_length(m.body) + coalesce(octet_length(m.properties), 0) AS len
    FROM messages m
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
    FROM n WHERE messages.id = n.id AND n.before < $8
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

/**
 * A peek's rows stop at the one whose body and properties bring the total to the budget (`$4`):
 * the window sums lengths the row headers give (no body is read for it), and only the rows kept
 * are fetched whole. Of every state: one range per state, merged (each an index range whatever
 * the queue holds).
 */
const peekWithin = (candidates: string) => `
  SELECT ${PEEK_COLUMNS} FROM messages WHERE id IN (
    SELECT id FROM (
      SELECT id, coalesce(sum(octet_length(body) + coalesce(char_length(properties), 0))
        OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
      FROM (${candidates}) c
    ) w WHERE before < $4)
  ORDER BY id`;
const PEEK_ALL = peekWithin(`
  SELECT id, body, properties FROM (
    ${MESSAGE_STATES.map(
      (s) =>
        `(SELECT id, body, properties FROM messages WHERE queue = $1 AND state = '${s}' AND id >= $2 ORDER BY id LIMIT $3)`,
    ).join(" UNION ALL ")}
  ) t ORDER BY id LIMIT $3`);
const PEEK_STATE = peekWithin(
  "SELECT id, body, properties FROM messages WHERE queue = $1 AND state = $5 AND id >= $2 ORDER BY id LIMIT $3",
);

const COUNT_LOCKED = "SELECT count(*)::int AS n FROM messages WHERE state = 'locked' AND subject = $1";
const READ_BUCKET = "SELECT tokens, updated_at FROM rate_limits WHERE key = $1";
const WRITE_BUCKET = `
  INSERT INTO rate_limits (key, tokens, updated_at) VALUES ($1, $2, $3)
  ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at`;

const DELETE_CLAIMED = "DELETE FROM messages WHERE id = $1 AND lock_token = $2";

const FIND_ATTEMPT =
  "SELECT response FROM receive_attempts WHERE queue = $1 AND attempt_id = $2 AND expires_at > $3";
const SAVE_ATTEMPT = `
  INSERT INTO receive_attempts (queue, attempt_id, response, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)
  ON CONFLICT (queue, attempt_id) DO UPDATE SET response = excluded.response,
    created_at = excluded.created_at, expires_at = excluded.expires_at`;

/**
 * Locks the asked deferred messages in the order asked, up to the one whose body and properties
 * bring the total to the budget (`$6`): the window sums lengths the row headers give. The rows are
 * locked (`FOR UPDATE`) before they are summed, as a concurrent call may take some of them. Each
 * is reached by its id (`IS TRUE` keeps `(queue, state)` from the planner: see `seekById` in
 * core/lease-fence.ts), not by reading every deferred message of the queue.
 */
const CLAIM_DEFERRED = `
  WITH s AS (SELECT id, ord FROM unnest($1::bigint[]) WITH ORDINALITY AS s(id, ord)),
  d AS (
    SELECT m.id, s.ord, octet_length(m.body) + coalesce(char_length(m.properties), 0) AS len
    FROM messages m JOIN s ON m.id = s.id
    WHERE (m.queue = $2 AND m.state = 'deferred') IS TRUE
    FOR UPDATE OF m
  ),
  w AS (
    SELECT id, ord, coalesce(sum(len) OVER (ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
    FROM d
  )
  UPDATE messages SET state = 'locked',
    locked_until = ${lease("$5", "$3", "0")},
    lock_token = ($4::text[])[w.ord], delivery_count = messages.delivery_count + 1, delivered_at = $5
  FROM w
  WHERE messages.id = w.id AND w.before < $6 AND messages.state = 'deferred'
  RETURNING w.ord, ${RETURNED}`;

/** The attempt id as stored (a very long id is stored as its hash: index rows are bounded). */
function attemptKey(id: string): string {
  return id.length > 512 ? `sha256:${createHash("sha256").update(id).digest("hex")}` : id;
}

/** What the claim statements of every connection share. */
export interface PgClaimShared {
  /** The schema (advisory lock keys are derived from it). */
  schema: string;
  /** The node's cache of queue rows. */
  queues: PgQueueRegistry;
}

/**
 * The claim statements on one PostgreSQL connection. `alone`: the verb runs without a transaction
 * (one autocommit statement): queue rows come from the node's cache, re-checked by the claim
 * statement's version guard, and a claim that needs a transaction (a strict queue's lock, the
 * loop of single claims) or found its cached row stale asks to be run again (`Rerun`).
 */
export class PgClaimOps implements Async<ClaimOps> {
  constructor(
    private readonly c: Conn,
    private readonly shared: PgClaimShared,
    private readonly alone: boolean,
  ) {}

  async queue(name: string): Promise<QueueRow | undefined> {
    const n = pgName(name);
    return (this.alone ? this.shared.queues.cached(n) : undefined) ?? this.shared.queues.get(this.c, n);
  }

  async queues(names: readonly string[]): Promise<(QueueRow | undefined)[]> {
    if (this.alone && names.length === 1) return [await this.queue(names[0]!)];
    const mapped = names.map(pgName);
    const rows = await this.shared.queues.getMany(this.c, mapped);
    return mapped.map((n) => rows.get(n));
  }

  async serialize(a: {
    strict: readonly string[];
    gates: readonly string[];
    attempt?: { queue: string; id: string };
  }): Promise<void> {
    const { schema } = this.shared;
    const keys = a.strict.map((q) => xactLockKey(schema, "queue", q));
    for (const g of a.gates) keys.push(xactLockKey(schema, "gate", g));
    if (a.attempt) keys.push(xactLockKey(schema, "attempt", a.attempt.queue, a.attempt.id));
    if (keys.length === 0) return;
    if (this.alone) throw new Rerun(true);
    await lockAll(this.c, keys);
  }

  async findAttempt(a: { queue: string; id: string; now: number }): Promise<string | undefined> {
    const [seen] = await this.c.q<{ response: string }>(FIND_ATTEMPT, [a.queue, attemptKey(a.id), a.now]);
    return seen?.response;
  }

  async saveAttempt(a: {
    queue: string;
    id: string;
    response: string;
    now: number;
    expiresAt: number;
  }): Promise<void> {
    await this.c.q(SAVE_ATTEMPT, [a.queue, attemptKey(a.id), a.response, a.now, a.expiresAt]);
  }

  /**
   * A peek-lock claim of a standard or group_fifo queue without gates is one statement (alone, it
   * commits without waiting for its flush). Strict queues (under the queue's lock, taken by
   * `serialize`), receive-and-delete (a deleted head frees its line within the batch) and gated
   * claims loop over single claims.
   */
  async claim(a: ClaimRequest): Promise<Message[]> {
    const q = a.queue as PgQueueRow;
    const strict = q.ordering_mode === "strict_fifo";
    const batch = !strict && a.mode === "peek-lock" && !a.gates;
    if (this.alone) {
      if (!batch) throw new Rerun(true);
      const r = await this.claimBatch(q, a, true);
      if (r.fresh) return r.messages;
      this.shared.queues.forget(q.name);
      throw new Rerun(false);
    }
    if (a.max === 0) return [];
    // The row was read in this transaction, so its version is current.
    if (batch) return (await this.claimBatch(q, a, false)).messages;
    const sql = strict ? CLAIM_ONE_STRICT : CLAIM_ONE_GROUPED;
    const out: Message[] = [];
    let bytes = 0;
    while (out.length < a.max && bytes < a.budget) {
      const token = newLockToken();
      const [row] = await this.c.q<MessageRow>(sql, [
        q.name,
        a.now,
        q.lock_duration_ms,
        token,
        a.gates?.excluded() ?? [],
        a.capMs,
      ]);
      if (!row) break;
      a.gates?.claimed(row.subject);
      if (a.mode === "receive-and-delete") {
        await this.c.q(DELETE_CLAIMED, [row.id, token]);
        out.push(deliveredMessage(row, false));
      } else {
        out.push(deliveredMessage(row));
      }
      bytes += row.body.length + (row.properties?.length ?? 0);
    }
    return out;
  }

  /**
   * The one-statement peek-lock batch, guarded by the row's version: `fresh: false` means the
   * (cached) row is stale and nothing was claimed. `alone`: the statement is its whole transaction,
   * which then does not wait for its flush.
   */
  private async claimBatch(
    q: PgQueueRow,
    a: ClaimRequest,
    alone: boolean,
  ): Promise<{ fresh: boolean; messages: Message[] }> {
    const tokens = Array.from({ length: a.max }, newLockToken);
    const rows = await this.c.q<MessageRow & { fresh: number }>(alone ? CLAIM_BATCH_RELAXED : CLAIM_BATCH, [
      q.name,
      a.now,
      a.max,
      q.lock_duration_ms,
      tokens,
      q.version,
      a.capMs,
      a.budget,
    ]);
    const fresh = (rows[0]?.fresh ?? 0) > 0;
    return { fresh, messages: rows.filter((r) => r.id !== null).map((r) => deliveredMessage(r)) };
  }

  async claimDeferred(a: {
    queue: QueueRow;
    seqs: readonly number[];
    now: number;
    budget: number;
  }): Promise<Message[]> {
    const unique = [...new Set(a.seqs)];
    if (unique.length === 0) return [];
    const rows = await this.c.q<MessageRow & { ord: number }>(CLAIM_DEFERRED, [
      unique,
      a.queue.name,
      a.queue.lock_duration_ms,
      unique.map(() => newLockToken()),
      a.now,
      a.budget,
    ]);
    return rows.sort((x, y) => x.ord - y.ord).map((r) => deliveredMessage(r));
  }

  async lockedCount(subject: string): Promise<number> {
    return (await this.c.q<{ n: number }>(COUNT_LOCKED, [subject]))[0]?.n ?? 0;
  }

  async bucket(key: string): Promise<{ tokens: number; updatedAt: number } | undefined> {
    const [row] = await this.c.q<{ tokens: number; updated_at: number }>(READ_BUCKET, [key]);
    return row && { tokens: row.tokens, updatedAt: row.updated_at };
  }

  async saveBucket(a: { key: string; tokens: number; now: number }): Promise<void> {
    await this.c.q(WRITE_BUCKET, [a.key, a.tokens, a.now]);
  }

  async peek(a: {
    queue: string;
    state?: MessageState;
    from: number;
    max: number;
    budget: number;
  }): Promise<MessageRow[]> {
    const queue = pgName(a.queue);
    return a.state
      ? this.c.q<MessageRow>(PEEK_STATE, [queue, a.from, a.max, a.budget, a.state])
      : this.c.q<MessageRow>(PEEK_ALL, [queue, a.from, a.max, a.budget]);
  }
}
