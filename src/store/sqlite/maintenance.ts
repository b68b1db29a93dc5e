import type { DlqBounds } from "../../core/dlq-bounds.js";
import { MAX_DELIVERY_REASON } from "../../core/limits.js";
import type { MaintenanceResult } from "../../core/maintenance-result.js";
import type { SqliteDatabase } from "./database.js";
import { DeadLetters } from "./dead-letters.js";
import type { SequenceNumbers } from "./sequence-numbers.js";

/**
 * The background work, as plain SQL steps over partial indexes: the reaper (lapsed leases), the
 * scheduler (due scheduled rows), the TTL sweep, the dedup and receipt janitors, DLQ retention and
 * free-page reclaim. Each step runs inside the caller's write transaction.
 */
export class Maintenance {
  private readonly reapLeases;
  private readonly activateDue;
  private readonly nextDue;
  private readonly nextLease;
  private readonly expireToDlq;
  private readonly expireDelete;
  private readonly maxDedupWindow;
  private readonly dropDedup;
  private readonly dropReceipts;
  private readonly dropAttempts;
  readonly deadLetters: DeadLetters;

  constructor(
    private readonly db: SqliteDatabase,
    ids: SequenceNumbers,
  ) {
    this.deadLetters = new DeadLetters(db, ids);
    // A message's own delivery limit, when it has one, wins over its queue's.
    const atLimit = `delivery_count >= CASE WHEN max_deliveries > 0 THEN max_deliveries
      ELSE (SELECT max_delivery_count FROM queues q WHERE q.name = messages.queue) END`;
    this.reapLeases = db.prepare(`
      UPDATE messages SET
        state = CASE WHEN ${atLimit} THEN 'dead_lettered' ELSE 'active' END,
        dead_letter_reason = CASE WHEN ${atLimit} THEN '${MAX_DELIVERY_REASON}' ELSE dead_letter_reason END,
        settled_at = CASE WHEN ${atLimit} THEN @now ELSE settled_at END,
        lock_token = NULL, locked_until = 0
      WHERE state = 'locked' AND locked_until <= @now
      RETURNING id, queue, state`);
    this.activateDue = db.prepare(
      "UPDATE messages SET state = 'active' WHERE state = 'scheduled' AND visible_at <= ? RETURNING queue",
    );
    this.nextDue = db.prepare("SELECT min(visible_at) AS due FROM messages WHERE state = 'scheduled'");
    this.nextLease = db.prepare("SELECT min(locked_until) AS at FROM messages WHERE state = 'locked'");
    const expired =
      "expires_at > 0 AND expires_at <= @now AND state <> 'dead_lettered' AND state <> 'completed' AND state <> 'cancelled'";
    // Pinned to the expiry index: by the queue's index SQLite would read every row of those queues.
    this.expireToDlq = db.prepare(`
      UPDATE messages INDEXED BY idx_msg_expire SET state = 'dead_lettered', dead_letter_reason = 'TTLExpired', settled_at = @now,
        lock_token = NULL, locked_until = 0
      WHERE ${expired} AND queue IN (SELECT name FROM queues WHERE dead_letter_on_expire = 1)`);
    this.expireDelete = db.prepare(`
      DELETE FROM messages INDEXED BY idx_msg_expire WHERE ${expired} AND queue IN (SELECT name FROM queues WHERE dead_letter_on_expire = 0)`);
    this.maxDedupWindow = db.prepare("SELECT coalesce(max(dedup_window_ms), 0) AS w FROM queues");
    this.dropDedup = db.prepare("DELETE FROM dedup WHERE seen_at < ?");
    this.dropReceipts = db.prepare("DELETE FROM settlement_receipts WHERE expires_at <= ?");
    this.dropAttempts = db.prepare("DELETE FROM receive_attempts WHERE expires_at <= ?");
  }

  /** Lapsed leases → active, or dead-lettered at the delivery limit. Also the crash recovery on open. */
  reap(now: number, out: MaintenanceResult): void {
    for (const row of this.reapLeases.all({ now }) as { id: number; queue: string; state: string }[]) {
      if (row.state === "active") {
        out.requeued++;
        out.activated.add(row.queue);
      } else {
        out.deadLettered++;
        out.settled.push(row.id);
      }
    }
  }

  /** Due scheduled rows → active. */
  schedule(now: number, out: MaintenanceResult): void {
    for (const row of this.activateDue.all(now) as { queue: string }[]) {
      out.scheduledActivated++;
      out.activated.add(row.queue);
    }
  }

  /** The earliest scheduled delivery time, if any (the scheduler's next wake-up). */
  nextScheduled(): number | undefined {
    return (this.nextDue.get() as { due: number | null }).due ?? undefined;
  }

  /** The earliest lease end, if any message is locked (the reaper's next wake-up). */
  nextLeaseEnd(): number | undefined {
    return (this.nextLease.get() as { at: number | null }).at ?? undefined;
  }

  /** TTL sweep: expired live rows → DLQ (`TTLExpired`) or deleted, per queue. */
  expire(now: number, out: MaintenanceResult): void {
    out.expired += this.expireToDlq.run({ now }).changes;
    out.expired += this.expireDelete.run({ now }).changes;
  }

  /** Dedup rows older than the largest window; expired receipts and receive attempts. */
  janitor(now: number, out: MaintenanceResult): void {
    const window = (this.maxDedupWindow.get() as { w: number }).w;
    out.dedupDropped += this.dropDedup.run(now - window).changes;
    out.auxDropped += this.dropReceipts.run(now).changes + this.dropAttempts.run(now).changes;
  }

  retention(bounds: DlqBounds, now: number, out: MaintenanceResult): void {
    out.retentionDropped += this.deadLetters.enforceRetention(bounds, now);
  }

  /**
   * Gives free pages back to the file system once enough accumulated (outside any transaction).
   * Failures (another process busy) are left for the next pass.
   */
  reclaim(): void {
    try {
      const free = this.db.pragma("freelist_count", { simple: true }) as number;
      if (free < 256) return;
      this.db.pragma("wal_checkpoint(TRUNCATE)");
      this.db.pragma("incremental_vacuum");
      this.db.pragma("wal_checkpoint(TRUNCATE)");
    } catch {
      // busy: next time
    }
  }
}
