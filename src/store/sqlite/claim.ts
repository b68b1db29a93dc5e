import type { Statement } from "better-sqlite3";
import { MESSAGE_STATES, type Message, type MessageState } from "../../contract/types.js";
import { leaseDuration } from "../../core/lease.js";
import {
  DELIVERY_COLUMNS,
  deliveredMessage,
  deliveryRow,
  type MessageRow,
  PEEK_COLUMNS,
} from "../../core/message-row.js";
import type { QueueRow } from "../../core/queue-config.js";
import { newLockToken } from "../../core/tokens.js";
import type { ClaimOps, ClaimRequest } from "../../core/verbs/claim.js";
import type { SqliteDatabase } from "./database.js";
import type { QueueCounter } from "./queue-counter.js";
import type { QueueRegistry } from "./queue-registry.js";

/** An earlier in-flight row in the same line blocks the candidate `m` (one probe per state, each an index seek). */
const blockedBy = (sameLine: string, state: string) =>
  `EXISTS (SELECT 1 FROM messages b WHERE b.queue = m.queue ${sameLine} AND b.state = '${state}' AND b.id < m.id)`;

/** A row `m` a claim may take from `@queue` at `@now`, before the ordering rules (also the send's hand-off check). */
export const claimable =
  "m.queue = @queue AND m.state = 'active' AND m.visible_at <= @now AND (m.expires_at = 0 OR m.expires_at > @now)";

/**
 * An earlier live (unexpired) active row in the same line: a candidate claimed ahead of it would
 * jump the line because of its priority. Pinned to the per-state index so it stays one seek.
 */
const earlierActive = (sameLine: string, index: string) =>
  `EXISTS (SELECT 1 FROM messages b INDEXED BY ${index} WHERE b.queue = m.queue ${sameLine} AND b.state = 'active'
          AND b.id < m.id AND (b.expires_at = 0 OR b.expires_at > @now))`;

/**
 * Head-of-line rules. Grouped messages (any ordering but strict) wait for every earlier same-group
 * row that is locked (expired or not: the lock holds the line until the reaper), deferred or
 * scheduled (a backoff or a scheduled send), and for an earlier active one (a higher priority never
 * jumps its group's line). Strict FIFO applies the same probes queue-wide, so it delivers in
 * sequence order whatever priorities the rows carry (a queue reconfigured to strict, a redrive).
 */
export const groupRule = `(m.group_id IS NULL OR NOT (
  ${blockedBy("AND b.group_id = m.group_id", "locked")} OR
  ${blockedBy("AND b.group_id = m.group_id", "deferred")} OR
  ${blockedBy("AND b.group_id = m.group_id", "scheduled")} OR
  ${earlierActive("AND b.group_id = m.group_id", "idx_msg_group")}))`;

const strictRule = `NOT (${blockedBy("", "locked")} OR ${blockedBy("", "deferred")} OR ${blockedBy("", "scheduled")} OR
  ${earlierActive("", "idx_msg_queue_state")})`;

/** The lease's end (see `leaseDuration`): `@lock` is the queue's, `@cap` the claim's cap (0: none). */
const LEASE = `@now + ${leaseDuration({ own: "lock_duration_ms", queue: "@lock", cap: "@cap" })}`;

/** Claim gates hold back the subjects listed in `@exclude` (a JSON array). */
const notExcluded = "(m.subject IS NULL OR m.subject NOT IN (SELECT value FROM json_each(@exclude)))";

/**
 * The claim statement. With `prioritized`, it picks in three arms, ORDER BY priority DESC, id: the
 * best row of a positive priority (the small partial index), else the first priority-0 row in
 * sequence order (the per-queue state index), else the best row of a negative priority. Without,
 * only the middle arm: for a queue that holds no prioritized active row (most queues, always), the
 * two other arms can only find nothing, and skipping them makes a claim a third cheaper.
 */
function claimSql(rule: string, gated = false, prioritized = true): string {
  const where = `${claimable} AND ${rule}${gated ? ` AND ${notExcluded}` : ""}`;
  const byPriority = (sign: string) =>
    `SELECT id FROM (SELECT m.id FROM messages m INDEXED BY idx_msg_claim_priority
                     WHERE m.priority ${sign} 0 AND m.priority <> 0 AND ${where} ORDER BY m.priority DESC, m.id LIMIT 1)`;
  const inSequence = `SELECT id FROM (SELECT m.id FROM messages m INDEXED BY idx_msg_queue_state
                      WHERE m.priority = 0 AND ${where} ORDER BY m.id LIMIT 1)`;
  const pick = prioritized
    ? `${byPriority(">")}
      UNION ALL
      ${inSequence}
      UNION ALL
      ${byPriority("<")}
      LIMIT 1`
    : inSequence;
  return `
    UPDATE messages SET state = 'locked', locked_until = ${LEASE}, lock_token = @token,
      delivery_count = delivery_count + 1, delivered_at = @now
    WHERE id = (
      ${pick})
    RETURNING ${DELIVERY_COLUMNS}`;
}

/** The claim statement per ordering family (exported for the query-plan test). */
export const CLAIM_SQL = { grouped: claimSql(groupRule), strict: claimSql(strictRule) } as const;

/** The same for a queue without prioritized active rows (exported for the query-plan test). */
export const UNPRIORITIZED_CLAIM_SQL = {
  grouped: claimSql(groupRule, false, false),
  strict: claimSql(strictRule, false, false),
} as const;

/** Whether a queue holds an active row of non-zero priority: one seek of the small partial index. */
const HAS_PRIORITIZED = `SELECT 1 FROM messages INDEXED BY idx_msg_claim_priority
  WHERE queue = ? AND state = 'active' AND priority <> 0 LIMIT 1`;

/** Where `SqliteClaimOps` keeps the claim statement of each combination. */
const claimIndex = (strict: boolean, gated: boolean, prioritized: boolean): number =>
  (strict ? 4 : 0) + (gated ? 2 : 0) + (prioritized ? 1 : 0);

/** The claim statements on SQLite: prepared once, synchronous, inside the verb's transaction. */
export class SqliteClaimOps implements ClaimOps {
  /** The claim statements, by `claimIndex(strict, gated, prioritized)`. */
  private readonly claims: Statement[];
  private readonly hasPrioritized;
  private readonly deleteClaimed;
  private readonly findAttemptRow;
  private readonly saveAttemptRow;
  private readonly claimDeferredRow;
  private readonly countLocked;
  private readonly readBucket;
  private readonly writeBucket;
  private readonly peekIds;
  private readonly peekRow;

  constructor(
    db: SqliteDatabase,
    private readonly registry: QueueRegistry,
    private readonly counts: QueueCounter,
  ) {
    // Raw mode: rows as arrays (see `deliveryRow`).
    this.claims = [];
    for (const strict of [false, true])
      for (const gated of [false, true])
        for (const prioritized of [false, true]) {
          const sql = claimSql(strict ? strictRule : groupRule, gated, prioritized);
          this.claims[claimIndex(strict, gated, prioritized)] = db.prepare(sql).raw(true);
        }
    this.hasPrioritized = db.prepare(HAS_PRIORITIZED).pluck();
    this.deleteClaimed = db.prepare("DELETE FROM messages WHERE id = ? AND lock_token = ?");
    this.findAttemptRow = db
      .prepare("SELECT response FROM receive_attempts WHERE queue = ? AND attempt_id = ? AND expires_at > ?")
      .pluck();
    this.saveAttemptRow = db.prepare(`
      INSERT INTO receive_attempts (queue, attempt_id, response, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (queue, attempt_id) DO UPDATE SET response = excluded.response,
        created_at = excluded.created_at, expires_at = excluded.expires_at`);
    this.claimDeferredRow = db
      .prepare(`
      UPDATE messages SET state = 'locked', locked_until = ${LEASE}, lock_token = @token,
        delivery_count = delivery_count + 1, delivered_at = @now
      WHERE id = @seq AND queue = @queue AND state = 'deferred'
      RETURNING ${DELIVERY_COLUMNS}`)
      .raw(true);
    this.countLocked = db
      .prepare(
        "SELECT count(*) FROM messages INDEXED BY idx_msg_lease WHERE state = 'locked' AND subject = ?",
      )
      .pluck();
    this.readBucket = db.prepare("SELECT tokens, updated_at FROM rate_limits WHERE key = ?");
    this.writeBucket = db.prepare(`
      INSERT INTO rate_limits (key, tokens, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at`);
    // Ids first (from the index alone), then each row until the budget is spent.
    this.peekIds = db
      .prepare("SELECT id FROM messages WHERE queue = ? AND state = ? AND id >= ? ORDER BY id LIMIT ?")
      .pluck();
    this.peekRow = db.prepare(`SELECT ${PEEK_COLUMNS} FROM messages WHERE id = ?`);
  }

  queue(name: string): QueueRow | undefined {
    return this.registry.get(name);
  }

  queues(names: readonly string[]): (QueueRow | undefined)[] {
    return names.map((n) => this.registry.get(n));
  }

  /** One writer at a time already: nothing to serialise. */
  serialize(): void {}

  findAttempt(a: { queue: string; id: string; now: number }): string | undefined {
    return this.findAttemptRow.get(a.queue, a.id, a.now) as string | undefined;
  }

  saveAttempt(a: { queue: string; id: string; response: string; now: number; expiresAt: number }): void {
    this.saveAttemptRow.run(a.queue, a.id, a.response, a.now, a.expiresAt);
  }

  /** One claim statement per message (each an index seek or two), up to the body budget. */
  claim(a: ClaimRequest): Message[] {
    const { queue, max, now, gates } = a;
    const name = queue.name;
    const strict = queue.ordering_mode === "strict_fifo";
    const lock = queue.lock_duration_ms;
    const cap = a.capMs;
    const del = a.mode === "receive-and-delete";
    // Looked up once per call: the rows cannot change under this synchronous loop but by its claims.
    const prioritized = max > 0 && this.hasPrioritized.get(name) !== undefined;
    const out: Message[] = [];
    let bytes = 0;
    let held: string[] | undefined;
    let exclude: string | undefined;
    while (out.length < max && bytes < a.budget) {
      const token = newLockToken();
      const excluded = gates?.excluded();
      if (excluded !== held) {
        held = excluded;
        exclude = excluded && JSON.stringify(excluded);
      }
      const values = (
        exclude === undefined
          ? this.claims[claimIndex(strict, false, prioritized)]!.get({ queue: name, now, lock, cap, token })
          : this.claims[claimIndex(strict, true, prioritized)]!.get({
              queue: name,
              now,
              lock,
              cap,
              token,
              exclude,
            })
      ) as unknown[] | undefined;
      if (!values) break;
      const row = deliveryRow(values);
      gates?.claimed(row.subject);
      if (del) {
        // Counted into `locked` first: the delete trigger counts it out of there.
        this.counts.moved(name, "active", "locked", 1);
        this.deleteClaimed.run(row.id, token);
        out.push(deliveredMessage(row, false));
      } else {
        out.push(deliveredMessage(row));
      }
      // Properties count too: a row written before their limit may carry megabytes of them.
      bytes += row.body.length + (row.properties?.length ?? 0);
    }
    // Counted here, once per call, not by the move trigger (migration 13).
    if (!del) this.counts.moved(name, "active", "locked", out.length);
    return out;
  }

  claimDeferred(a: { queue: QueueRow; seqs: readonly number[]; now: number; budget: number }): Message[] {
    const out: Message[] = [];
    let bytes = 0;
    for (const seq of a.seqs) {
      if (bytes >= a.budget) break;
      const values = this.claimDeferredRow.get({
        seq,
        queue: a.queue.name,
        now: a.now,
        lock: a.queue.lock_duration_ms,
        cap: 0,
        token: newLockToken(),
      }) as unknown[] | undefined;
      if (!values) continue;
      const row = deliveryRow(values);
      out.push(deliveredMessage(row));
      bytes += row.body.length + (row.properties?.length ?? 0);
    }
    this.counts.moved(a.queue.name, "deferred", "locked", out.length);
    return out;
  }

  lockedCount(subject: string): number {
    return this.countLocked.get(subject) as number;
  }

  bucket(key: string): { tokens: number; updatedAt: number } | undefined {
    const row = this.readBucket.get(key) as { tokens: number; updated_at: number } | undefined;
    return row && { tokens: row.tokens, updatedAt: row.updated_at };
  }

  saveBucket(a: { key: string; tokens: number; now: number }): void {
    this.writeBucket.run(a.key, a.tokens, a.now);
  }

  /** One index range per state, merged: each is a seek, whatever the queue holds. */
  peek(a: { queue: string; state?: MessageState; from: number; max: number; budget: number }): MessageRow[] {
    const { queue, state, from, max } = a;
    const ids = state
      ? (this.peekIds.all(queue, state, from, max) as number[])
      : MESSAGE_STATES.flatMap((s) => this.peekIds.all(queue, s, from, max) as number[])
          .sort((x, y) => x - y)
          .slice(0, max);
    const rows: MessageRow[] = [];
    let bytes = 0;
    for (const id of ids) {
      // Read without a transaction: another process may have removed the row since its id was read.
      const row = this.peekRow.get(id) as MessageRow | undefined;
      if (!row) continue;
      rows.push(row);
      bytes += row.body.length + (row.properties?.length ?? 0);
      if (bytes >= a.budget) break;
    }
    return rows;
  }
}
