import { MAX_DELIVERY_REASON } from "../../core/limits.js";
import type { ExpiredInQueue, MaintenanceOps, Reaped } from "../../core/verbs/maintenance.js";
import type { SqliteDatabase } from "./database.js";
import { SqliteDeadLetterOps } from "./dead-letters.js";
import type { QueueCounter } from "./queue-counter.js";
import type { QueueRegistry } from "./queue-registry.js";
import type { SequenceNumbers } from "./sequence-numbers.js";
import type { TopicLog } from "./topic-log.js";

/**
 * The upkeep's statements on SQLite, plain SQL over partial indexes (the rules are in
 * core/verbs/maintenance.ts); each runs inside the step's write transaction.
 */
export class SqliteMaintenanceOps extends SqliteDeadLetterOps implements MaintenanceOps {
  private readonly reapRows;
  private readonly activateRows;
  private readonly nextDue;
  private readonly nextLease;
  private readonly expireToDlq;
  private readonly expireDelete;
  private readonly dropRetainedRows;
  private readonly dropLocks;
  private readonly maxDedupWindow;
  private readonly dropDedupRows;
  private readonly dropReceipts;
  private readonly dropAttempts;

  constructor(
    db: SqliteDatabase,
    ids: SequenceNumbers,
    queues: QueueRegistry,
    private readonly topicLog: TopicLog,
    counts: QueueCounter,
  ) {
    super(db, ids, queues, counts);
    // A message's own delivery limit, when it has one, wins over its queue's.
    const atLimit = `delivery_count >= CASE WHEN max_deliveries > 0 THEN max_deliveries
      ELSE (SELECT max_delivery_count FROM queues q WHERE q.name = messages.queue) END`;
    this.reapRows = db.prepare(`
      UPDATE messages SET
        state = CASE WHEN ${atLimit} THEN 'dead_lettered' ELSE 'active' END,
        dead_letter_reason = CASE WHEN ${atLimit} THEN '${MAX_DELIVERY_REASON}' ELSE dead_letter_reason END,
        settled_at = CASE WHEN ${atLimit} THEN @now ELSE settled_at END,
        lock_token = NULL, locked_until = 0
      WHERE state = 'locked' AND locked_until <= @now
      RETURNING id, queue, state`);
    this.activateRows = db.prepare(
      "UPDATE messages SET state = 'active' WHERE state = 'scheduled' AND visible_at <= ? RETURNING queue",
    );
    this.nextDue = db.prepare("SELECT min(visible_at) AS due FROM messages WHERE state = 'scheduled'");
    this.nextLease = db.prepare("SELECT min(locked_until) AS at FROM messages WHERE state = 'locked'");
    const expired =
      "expires_at > 0 AND expires_at <= @now AND state <> 'dead_lettered' AND state <> 'completed' AND state <> 'cancelled'";
    // Pinned to the expiry index: by the queue's index SQLite would read every row of those queues.
    this.expireToDlq = db
      .prepare(`
      UPDATE messages INDEXED BY idx_msg_expire SET state = 'dead_lettered', dead_letter_reason = 'TTLExpired', settled_at = @now,
        lock_token = NULL, locked_until = 0
      WHERE ${expired} AND queue IN (SELECT name FROM queues WHERE dead_letter_on_expire = 1)
      RETURNING queue`)
      .pluck();
    this.expireDelete = db
      .prepare(`
      DELETE FROM messages INDEXED BY idx_msg_expire WHERE ${expired} AND queue IN (SELECT name FROM queues WHERE dead_letter_on_expire = 0)
      RETURNING queue`)
      .pluck();
    this.dropRetainedRows = db.prepare(`
      DELETE FROM messages WHERE id IN (SELECT id FROM messages INDEXED BY idx_msg_expire
        WHERE expires_at > 0 AND expires_at <= ? AND state <> 'dead_lettered' AND state IN ('completed', 'cancelled')
        LIMIT 10000)`);
    this.dropLocks = db.prepare("DELETE FROM locks WHERE expires_at <= ?");
    this.maxDedupWindow = db.prepare("SELECT coalesce(max(dedup_window_ms), 0) AS w FROM queues");
    this.dropDedupRows = db.prepare("DELETE FROM dedup WHERE seen_at < ?");
    this.dropReceipts = db.prepare("DELETE FROM settlement_receipts WHERE expires_at <= ?");
    this.dropAttempts = db.prepare("DELETE FROM receive_attempts WHERE expires_at <= ?");
  }

  reapLeases(a: { now: number }): Reaped[] {
    const rows = this.reapRows.all(a) as { id: number; queue: string; state: string }[];
    return rows.map((r) => ({ id: r.id, queue: r.queue, deadLettered: r.state !== "active" }));
  }

  nextLeaseEnd(): number | undefined {
    return (this.nextLease.get() as { at: number | null }).at ?? undefined;
  }

  activateDue(a: { now: number }): string[] {
    return (this.activateRows.all(a.now) as { queue: string }[]).map((r) => r.queue);
  }

  nextScheduled(): number | undefined {
    return (this.nextDue.get() as { due: number | null }).due ?? undefined;
  }

  deadLetterExpired(a: { now: number }): ExpiredInQueue[] {
    return perQueue(this.expireToDlq.iterate(a) as Iterable<string>);
  }

  deleteExpired(a: { now: number }): ExpiredInQueue[] {
    return perQueue(this.expireDelete.iterate(a) as Iterable<string>);
  }

  dropRetained(a: { now: number }): number {
    return this.dropRetainedRows.run(a.now).changes;
  }

  dropExpiredLocks(a: { now: number }): void {
    this.dropLocks.run(a.now);
  }

  dropDedup(a: { now: number }): number {
    const window = (this.maxDedupWindow.get() as { w: number }).w;
    return this.dropDedupRows.run(a.now - window).changes;
  }

  dropExpiredAux(a: { now: number }): number {
    return this.dropReceipts.run(a.now).changes + this.dropAttempts.run(a.now).changes;
  }

  compactTopicLog(a: { now: number; budget: number }): number {
    return this.topicLog.compact(a.now, a.budget);
  }
}

/** The rows' queues counted (read one at a time: an expiry can reach a million rows). */
function perQueue(queues: Iterable<string>): ExpiredInQueue[] {
  const n = new Map<string, number>();
  for (const q of queues) n.set(q, (n.get(q) ?? 0) + 1);
  return [...n].map(([queue, count]) => ({ queue, n: count }));
}
