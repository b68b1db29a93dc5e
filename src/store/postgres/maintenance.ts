import type { DlqBounds } from "../../core/dlq-bounds.js";
import { MAX_DELIVERY_REASON } from "../../core/limits.js";
import type { MaintenanceResult } from "../../core/maintenance-result.js";
import { EFFECTIVE_MAX } from "./columns.js";
import type { Conn } from "./db.js";
import { PgDeadLetters } from "./dead-letters.js";

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

const EXPIRED =
  "messages.expires_at > 0 AND messages.expires_at <= $1 AND messages.state NOT IN ('dead_lettered', 'completed', 'cancelled')";

const EXPIRE_TO_DLQ = `
  WITH d AS (
    UPDATE messages SET state = 'dead_lettered', dead_letter_reason = 'TTLExpired', settled_at = $1,
      lock_token = NULL, locked_until = 0
    FROM queues q WHERE q.name = messages.queue AND q.dead_letter_on_expire = 1 AND ${EXPIRED}
    RETURNING 1)
  SELECT count(*)::int AS n FROM d`;

const EXPIRE_DELETE = `
  WITH d AS (
    DELETE FROM messages USING queues q
    WHERE q.name = messages.queue AND q.dead_letter_on_expire = 0 AND ${EXPIRED}
    RETURNING 1)
  SELECT count(*)::int AS n FROM d`;

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

/**
 * The background work as plain SQL steps over partial indexes (reaper, scheduler, TTL sweep,
 * janitors, DLQ retention), each inside the caller's transaction. Every step is safe to run on two
 * nodes at once (each touches a row only under its row lock and re-checks it), so leadership is
 * about not doing the work twice, never about correctness.
 */
export class PgMaintenance {
  readonly deadLetters: PgDeadLetters;

  constructor(schema: string) {
    this.deadLetters = new PgDeadLetters(schema);
  }

  async reap(c: Conn, now: number, out: MaintenanceResult): Promise<void> {
    // Every pass (at least once a second): Stats adds up the deltas not folded yet.
    await c.q(COMPACT_COUNTS);
    const activated = new Set<string>();
    for (const row of await c.q<{ id: number; queue: string; state: string }>(REAP, [now])) {
      if (row.state === "active") {
        out.requeued++;
        activated.add(row.queue);
      } else {
        out.deadLettered++;
        out.settled.push(row.id);
      }
    }
    await this.wake(c, activated, out);
  }

  async schedule(c: Conn, now: number, out: MaintenanceResult): Promise<void> {
    const activated = new Set<string>();
    for (const row of await c.q<{ queue: string }>(ACTIVATE_DUE, [now])) {
      out.scheduledActivated++;
      activated.add(row.queue);
    }
    await this.wake(c, activated, out);
  }

  /** The earliest scheduled delivery time, if any. */
  async nextScheduled(c: Conn): Promise<number | undefined> {
    const [row] = await c.q<{ due: number | null }>(NEXT_DUE);
    return row?.due ?? undefined;
  }

  /** The earliest lease end, if any message is locked (the reaper's next wake-up). */
  async nextLeaseEnd(c: Conn): Promise<number | undefined> {
    const [row] = await c.q<{ at: number | null }>(NEXT_LEASE_END);
    return row?.at ?? undefined;
  }

  async expire(c: Conn, now: number, out: MaintenanceResult): Promise<void> {
    out.expired += (await c.q<{ n: number }>(EXPIRE_TO_DLQ, [now]))[0]?.n ?? 0;
    out.expired += (await c.q<{ n: number }>(EXPIRE_DELETE, [now]))[0]?.n ?? 0;
    out.retainedDropped += (await c.q<{ n: number }>(DROP_RETAINED, [now]))[0]?.n ?? 0;
    await c.q(DROP_LOCKS, [now]);
  }

  async janitor(c: Conn, now: number, out: MaintenanceResult): Promise<void> {
    out.dedupDropped += (await c.q<{ n: number }>(DROP_DEDUP, [now]))[0]?.n ?? 0;
    out.auxDropped += (await c.q<{ n: number }>(DROP_AUX, [now]))[0]?.n ?? 0;
  }

  async retention(c: Conn, bounds: DlqBounds, now: number, out: MaintenanceResult): Promise<void> {
    out.retentionDropped += await this.deadLetters.enforceRetention(c, bounds, now);
  }

  private async wake(_c: Conn, activated: Set<string>, out: MaintenanceResult): Promise<void> {
    for (const q of activated) out.activated.add(q);
  }
}
