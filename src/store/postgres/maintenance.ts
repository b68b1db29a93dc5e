import { MAX_DELIVERY_REASON } from "../../core/limits.js";
import type { Async } from "../../core/port.js";
import type { ExpiredInQueue, MaintenanceOps, Reaped } from "../../core/verbs/maintenance.js";
import { EFFECTIVE_MAX } from "./columns.js";
import { count, PgDeadLetterOps } from "./dead-letters.js";
import { PgTopicLog } from "./topic-log.js";

/** Lapsed leases → active, or dead-lettered at the delivery limit (the reaper, and recovery at open). */
const atLimit = `messages.delivery_count >= ${EFFECTIVE_MAX}`;
const REAP = `
  UPDATE messages SET
    state = CASE WHEN ${atLimit} THEN 'dead_lettered' ELSE 'active' END,
    dead_letter_reason = CASE WHEN ${atLimit} THEN '${MAX_DELIVERY_REASON}' ELSE messages.dead_letter_reason END,
    settled_at = CASE WHEN ${atLimit} THEN $1 ELSE messages.settled_at END,
    lock_token = NULL, locked_until = 0
  FROM queues q
  WHERE q.name = messages.queue AND messages.state = 'locked' AND messages.locked_until <= $1
  RETURNING messages.id, messages.queue, messages.state`;

const ACTIVATE_DUE =
  "UPDATE messages SET state = 'active' WHERE state = 'scheduled' AND visible_at <= $1 RETURNING queue";

const NEXT_DUE = "SELECT min(visible_at) AS due FROM messages WHERE state = 'scheduled'";
const NEXT_LEASE_END = "SELECT min(locked_until) AS at FROM messages WHERE state = 'locked'";

/** Matches `idx_msg_expire`'s predicate term for term, so that the planner can use that index. */
const EXPIRED =
  "messages.expires_at > 0 AND messages.expires_at <= $1 AND messages.state NOT IN ('dead_lettered', 'completed', 'cancelled')";

const EXPIRE_TO_DLQ = `
  WITH d AS (
    UPDATE messages SET state = 'dead_lettered', dead_letter_reason = 'TTLExpired', settled_at = $1,
      lock_token = NULL, locked_until = 0
    FROM queues q WHERE q.name = messages.queue AND q.dead_letter_on_expire = 1 AND ${EXPIRED}
    RETURNING messages.queue)
  SELECT queue, count(*)::int AS n FROM d GROUP BY queue`;

const EXPIRE_DELETE = `
  WITH d AS (
    DELETE FROM messages USING queues q
    WHERE q.name = messages.queue AND q.dead_letter_on_expire = 0 AND ${EXPIRED}
    RETURNING messages.queue)
  SELECT queue, count(*)::int AS n FROM d GROUP BY queue`;

/** Kept outcomes (completed, cancelled) whose retention lapsed. */
const DROP_RETAINED = `
  WITH d AS (DELETE FROM messages WHERE id IN (
      SELECT id FROM messages WHERE state IN ('completed', 'cancelled') AND expires_at > 0 AND expires_at <= $1
      LIMIT 10000) RETURNING 1)
  SELECT count(*)::int AS n FROM d`;

const DROP_LOCKS = "DELETE FROM locks WHERE expires_at <= $1";

const DROP_DEDUP = `
  WITH d AS (DELETE FROM dedup WHERE seen_at < $1 - (SELECT coalesce(max(dedup_window_ms), 0) FROM queues) RETURNING 1)
  SELECT count(*)::int AS n FROM d`;

const DROP_AUX = `
  WITH r AS (DELETE FROM settlement_receipts WHERE expires_at <= $1 RETURNING 1),
       a AS (DELETE FROM receive_attempts WHERE expires_at <= $1 RETURNING 1)
  SELECT ((SELECT count(*) FROM r) + (SELECT count(*) FROM a))::int AS n`;

/**
 * Folds the per-statement count deltas into the per-queue counts (migration 4). The deltas it
 * deletes are those its snapshot sees, and it adds exactly those, in one statement: a delta
 * committed meanwhile waits for the next pass, and a reader sees either side, never both.
 */
const COMPACT_COUNTS = `
  WITH moved AS (DELETE FROM queue_count_deltas RETURNING queue, state, n)
  INSERT INTO queue_counts (queue, state, n)
  SELECT queue, state, sum(n) FROM moved GROUP BY queue, state
  ON CONFLICT (queue, state) DO UPDATE SET n = queue_counts.n + excluded.n`;

/** The topic log's statements hold no state of their own. */
const topicLog = new PgTopicLog();

/**
 * The upkeep's statements on PostgreSQL, on one connection (the rules are in
 * core/verbs/maintenance.ts). Every one is safe to run on two nodes at once (each touches a row only
 * under its row lock and re-checks it), so leadership is about not doing the work twice, never
 * about correctness.
 */
export class PgMaintenanceOps extends PgDeadLetterOps implements Async<MaintenanceOps> {
  async reapLeases(a: { now: number }): Promise<Reaped[]> {
    // Every pass (at least once a second, and at open): Stats adds up the deltas not folded yet.
    await this.c.q(COMPACT_COUNTS);
    const rows = await this.c.q<{ id: number; queue: string; state: string }>(REAP, [a.now]);
    return rows.map((r) => ({ id: r.id, queue: r.queue, deadLettered: r.state !== "active" }));
  }

  async nextLeaseEnd(): Promise<number | undefined> {
    const [row] = await this.c.q<{ at: number | null }>(NEXT_LEASE_END);
    return row?.at ?? undefined;
  }

  async activateDue(a: { now: number }): Promise<string[]> {
    return (await this.c.q<{ queue: string }>(ACTIVATE_DUE, [a.now])).map((r) => r.queue);
  }

  async nextScheduled(): Promise<number | undefined> {
    const [row] = await this.c.q<{ due: number | null }>(NEXT_DUE);
    return row?.due ?? undefined;
  }

  deadLetterExpired(a: { now: number }): Promise<ExpiredInQueue[]> {
    return this.c.q<ExpiredInQueue>(EXPIRE_TO_DLQ, [a.now]);
  }

  deleteExpired(a: { now: number }): Promise<ExpiredInQueue[]> {
    return this.c.q<ExpiredInQueue>(EXPIRE_DELETE, [a.now]);
  }

  dropRetained(a: { now: number }): Promise<number> {
    return count(this.c, DROP_RETAINED, [a.now]);
  }

  async dropExpiredLocks(a: { now: number }): Promise<void> {
    await this.c.q(DROP_LOCKS, [a.now]);
  }

  dropDedup(a: { now: number }): Promise<number> {
    return count(this.c, DROP_DEDUP, [a.now]);
  }

  dropExpiredAux(a: { now: number }): Promise<number> {
    return count(this.c, DROP_AUX, [a.now]);
  }

  compactTopicLog(a: { now: number; budget: number }): Promise<number> {
    return topicLog.compact(this.c, a.now, a.budget);
  }
}
