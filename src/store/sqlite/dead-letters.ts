import type { DeadLetter, DeadLetterOps, DeadLetterQueue } from "../../core/verbs/dead-letters.js";
import { RETENTION_BATCH } from "../../core/verbs/dead-letters.js";
import type { SqliteDatabase } from "./database.js";
import type { QueueCounter } from "./queue-counter.js";
import type { QueueRegistry } from "./queue-registry.js";
import type { SequenceNumbers } from "./sequence-numbers.js";

/** The dead-letter statements on SQLite (redrive, purge, retention; the rules are in core/verbs/dead-letters.ts). */
export class SqliteDeadLetterOps implements DeadLetterOps {
  private readonly candidates;
  private readonly redriveRow;
  private readonly copyTo;
  private readonly deleteRow;
  private readonly purgeOldest;
  private readonly purgeAll;
  private readonly queuesWithDeadLetters;
  private readonly deleteOlderThanBatch;
  private readonly nthNewest;
  private readonly overBytes;
  private readonly deleteUpTo;

  constructor(
    db: SqliteDatabase,
    private readonly ids: SequenceNumbers,
    private readonly queues: QueueRegistry,
    private readonly counts: QueueCounter,
  ) {
    this.candidates = db.prepare(`
      SELECT id, group_id FROM messages WHERE queue = @queue AND state = 'dead_lettered' AND (@cutoff = 0 OR enqueued_at < @cutoff)
      ORDER BY id LIMIT @limit`);
    this.redriveRow = db.prepare(`
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
    this.purgeAll = db.prepare(`
      DELETE FROM messages WHERE queue = @queue AND state = 'dead_lettered' AND (@cutoff = 0 OR enqueued_at < @cutoff)`);
    this.queuesWithDeadLetters = db.prepare(`
      SELECT q.name, q.dlq_max_age_ms, q.dlq_max_count, q.dlq_max_bytes FROM queues q
      WHERE EXISTS (SELECT 1 FROM messages m WHERE m.queue = q.name AND m.state = 'dead_lettered')`);
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

  queueOrdering(a: { name: string }): string | undefined {
    return this.queues.get(a.name)?.ordering_mode;
  }

  deadLetters(a: { queue: string; cutoff: number; limit: number; only?: number[] }): DeadLetter[] {
    const limit = a.only || a.limit <= 0 ? -1 : a.limit;
    const rows = this.candidates.all({ queue: a.queue, cutoff: a.cutoff, limit }) as {
      id: number;
      group_id: string | null;
    }[];
    const wanted = a.only && new Set(a.only);
    const out: DeadLetter[] = [];
    for (const r of rows) if (!wanted || wanted.has(r.id)) out.push({ id: r.id, groupId: r.group_id });
    return out;
  }

  redriveInPlace(a: { id: number; now: number }): boolean {
    return this.redriveRow.run(a).changes > 0;
  }

  /** A copy and a delete per message (one writer at a time: no ordering locks needed). */
  redriveTo(a: { letters: DeadLetter[]; target: string; now: number }): number {
    let moved = 0;
    for (const { id } of a.letters) {
      if (this.copyTo.run({ target: a.target, now: a.now, id, seq: this.ids.take(1) }).changes > 0) {
        this.deleteRow.run(id);
        moved++;
      }
    }
    // The copies, counted as inserts are (their deletes by the delete trigger).
    this.counts.inserted(a.target, "active", moved);
    return moved;
  }

  purgeDeadLetters(a: { queue: string; cutoff: number; max: number }): number {
    if (a.max > 0) return this.purgeOldest.run({ queue: a.queue, cutoff: a.cutoff, limit: a.max }).changes;
    return this.purgeAll.run({ queue: a.queue, cutoff: a.cutoff }).changes;
  }

  deadLetterQueues(): DeadLetterQueue[] {
    const rows = this.queuesWithDeadLetters.all() as {
      name: string;
      dlq_max_age_ms: number;
      dlq_max_count: number;
      dlq_max_bytes: number;
    }[];
    return rows.map((q) => ({
      name: q.name,
      maxAgeMs: q.dlq_max_age_ms,
      maxCount: q.dlq_max_count,
      maxBytes: q.dlq_max_bytes,
    }));
  }

  dropDeadLettersBefore(a: { queue: string; before: number }): number {
    return this.deleteOlderThanBatch.run(a.queue, a.before).changes;
  }

  nthNewestDeadLetter(a: { queue: string; offset: number }): number | undefined {
    return (this.nthNewest.get(a.queue, a.offset) as { id: number } | undefined)?.id;
  }

  deadLetterBytesEdge(a: { queue: string; bytes: number }): number | undefined {
    return (this.overBytes.get(a.queue, a.bytes) as { id: number } | undefined)?.id;
  }

  dropDeadLettersUpTo(a: { queue: string; id: number }): number {
    return this.deleteUpTo.run(a.queue, a.id).changes;
  }
}
