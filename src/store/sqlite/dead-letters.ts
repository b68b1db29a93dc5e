import { type DlqBounds, effectiveBound } from "../../core/dlq-bounds.js";
import type { QueueRow } from "../../core/queue-config.js";
import type { SqliteDatabase } from "./database.js";
import type { SequenceNumbers } from "./sequence-numbers.js";

const RETENTION_BATCH = 1000;
const RETENTION_MAX_BATCHES = 100;

/** Redrive, purge and retention: everything that reads or removes dead letters. */
export class DeadLetters {
  private readonly candidates;
  private readonly redriveInPlace;
  private readonly copyTo;
  private readonly deleteRow;
  private readonly purgeOldest;
  private readonly purgeOlderThan;
  private readonly queuesWithDeadLetters;
  private readonly deleteOlderThanBatch;
  private readonly nthNewest;
  private readonly overBytes;
  private readonly deleteUpTo;

  constructor(
    db: SqliteDatabase,
    private readonly ids: SequenceNumbers,
  ) {
    this.candidates = db.prepare(`
      SELECT id FROM messages WHERE queue = @queue AND state = 'dead_lettered' AND (@cutoff = 0 OR enqueued_at < @cutoff)
      ORDER BY id LIMIT @limit`);
    this.redriveInPlace = db.prepare(`
      UPDATE messages SET state = 'active', delivery_count = 0, lock_token = NULL, locked_until = 0, visible_at = 0,
        expires_at = CASE WHEN expires_at <= @now THEN 0 ELSE expires_at END,
        dead_letter_reason = NULL, dead_letter_description = NULL,
        settled_at = 0, redrive_count = redrive_count + 1, cancel_requested = 0,
        -- a newer live message may hold its unique key by now: the redriven copy gives it up
        unique_key = CASE WHEN unique_key IS NOT NULL AND EXISTS (SELECT 1 FROM messages l
          WHERE l.queue = messages.queue AND l.unique_key = messages.unique_key
            AND l.state IN ('active', 'locked', 'deferred', 'scheduled')) THEN NULL ELSE unique_key END
      WHERE id = @id AND state = 'dead_lettered'`);
    this.copyTo = db.prepare(`
      INSERT INTO messages (id, queue, state, priority, visible_at, enqueued_at, expires_at, message_id, correlation_id,
        reply_to, group_id, content_type, subject, properties, body)
      SELECT @seq, @target, 'active', priority, @now, @now, 0, message_id, correlation_id, reply_to, group_id, content_type,
        subject, properties, body
      FROM messages WHERE id = @id AND state = 'dead_lettered'`);
    this.deleteRow = db.prepare("DELETE FROM messages WHERE id = ?");
    this.purgeOldest = db.prepare(`
      DELETE FROM messages WHERE id IN (
        SELECT id FROM messages WHERE queue = @queue AND state = 'dead_lettered' AND (@cutoff = 0 OR enqueued_at < @cutoff)
        ORDER BY id LIMIT @limit)`);
    this.purgeOlderThan = db.prepare(`
      DELETE FROM messages WHERE queue = @queue AND state = 'dead_lettered' AND (@cutoff = 0 OR enqueued_at < @cutoff)`);
    this.queuesWithDeadLetters = db.prepare(`
      SELECT q.* FROM queues q WHERE EXISTS (SELECT 1 FROM messages m WHERE m.queue = q.name AND m.state = 'dead_lettered')`);
    this.deleteOlderThanBatch = db.prepare(`
      DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE queue = ? AND state = 'dead_lettered'
        AND enqueued_at < ? ORDER BY id LIMIT ${RETENTION_BATCH})`);
    this.nthNewest = db.prepare(`
      SELECT id FROM messages WHERE queue = ? AND state = 'dead_lettered' ORDER BY id DESC LIMIT 1 OFFSET ?`);
    this.overBytes = db.prepare(`
      SELECT id FROM (SELECT id, sum(length(body)) OVER (ORDER BY id DESC) AS total
                      FROM messages WHERE queue = ? AND state = 'dead_lettered')
      WHERE total > ? ORDER BY id DESC LIMIT 1`);
    this.deleteUpTo = db.prepare(`
      DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE queue = ? AND state = 'dead_lettered'
        AND id <= ? ORDER BY id LIMIT ${RETENTION_BATCH})`);
  }

  /** The ids of the dead letters a redrive would move, oldest first (only among `only`, when given). */
  select(queue: string, max: number, cutoff: number, only?: number[]): number[] {
    const limit = max > 0 ? max : -1;
    const ids = (this.candidates.all({ queue, cutoff, limit: only ? -1 : limit }) as { id: number }[]).map(
      (r) => r.id,
    );
    if (!only) return ids;
    const wanted = new Set(only);
    const picked = ids.filter((id) => wanted.has(id));
    return max > 0 ? picked.slice(0, max) : picked;
  }

  /**
   * Moves the given dead letters back to active: in place (same seq, delivery count reset; a TTL that
   * already lapsed is cleared, or the message would expire again at once) or into `target` (a fresh
   * seq and enqueue time, no TTL). Returns how many moved.
   */
  redrive(ids: number[], target: string | undefined, now: number): number {
    let moved = 0;
    for (const id of ids) {
      if (target === undefined) {
        moved += this.redriveInPlace.run({ id, now }).changes;
      } else if (this.copyTo.run({ target, now, id, seq: this.ids.take(1) }).changes > 0) {
        this.deleteRow.run(id);
        moved++;
      }
    }
    return moved;
  }

  purge(queue: string, max: number, cutoff: number): number {
    if (max > 0) return this.purgeOldest.run({ queue, cutoff, limit: max }).changes;
    return this.purgeOlderThan.run({ queue, cutoff }).changes;
  }

  /** One retention pass over every queue with dead letters; returns how many were dropped. */
  enforceRetention(defaults: DlqBounds, now: number): number {
    let dropped = 0;
    for (const q of this.queuesWithDeadLetters.all() as QueueRow[]) {
      const age = effectiveBound(q.dlq_max_age_ms, defaults.maxAgeMs);
      const count = effectiveBound(q.dlq_max_count, defaults.maxCount);
      const bytes = effectiveBound(q.dlq_max_bytes, defaults.maxBytes);
      if (age > 0) dropped += this.batched(() => this.deleteOlderThanBatch.run(q.name, now - age).changes);
      if (count > 0) {
        const edge = this.nthNewest.get(q.name, count) as { id: number } | undefined;
        if (edge) dropped += this.batched(() => this.deleteUpTo.run(q.name, edge.id).changes);
      }
      if (bytes > 0) {
        const edge = this.overBytes.get(q.name, bytes) as { id: number } | undefined;
        if (edge) dropped += this.batched(() => this.deleteUpTo.run(q.name, edge.id).changes);
      }
    }
    return dropped;
  }

  private batched(step: () => number): number {
    let total = 0;
    for (let i = 0; i < RETENTION_MAX_BATCHES; i++) {
      const n = step();
      total += n;
      if (n < RETENTION_BATCH) break;
    }
    return total;
  }
}
