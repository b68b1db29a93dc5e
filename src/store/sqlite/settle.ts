import { leaseDuration } from "../../core/lease.js";
import { leaseFence } from "../../core/lease-fence.js";
import { MAX_DELIVERY_REASON } from "../../core/limits.js";
import { RECEIPT_TTL_MS } from "../../core/receipts.js";
import type {
  Abandoned,
  BatchSettled,
  Fence,
  KeepOptions,
  LinePlace,
  Outcome,
  Receipt,
  Renewed,
  Settled,
  SettleOps,
} from "../../core/verbs/settle.js";
import type { SqliteDatabase } from "./database.js";
import type { QueueRegistry } from "./queue-registry.js";
import { Receipts } from "./receipts.js";

const FENCE = leaseFence({ seq: "@seq", queue: "@queue", token: "@token" });

/** A message's own delivery limit when it has one, else the queue's (`@max`). */
export const EFFECTIVE_MAX = "(CASE WHEN max_deliveries > 0 THEN max_deliveries ELSE @max END)";

const applied = (changes: number): Outcome => (changes > 0 ? "applied" : "missed");

/** What a fenced statement's `RETURNING grouped` answered: no row when the fence did not hold. */
type GroupedRow = { grouped: number } | undefined;

/** Answers whether the changed row has a group (see `Settled`). */
const GROUPED = "RETURNING group_id IS NOT NULL AS grouped";

/**
 * The settlement statements on SQLite (the rules are in core/verbs/settle.ts). A receipt is its own
 * INSERT in the same transaction; a replay is looked up only when the fenced statement missed.
 */
export class SqliteSettleOps implements SettleOps {
  private readonly receipts: Receipts;
  private readonly completeRow;
  private readonly keepRow;
  private readonly keptCompletion;
  private readonly abandonRow;
  private readonly releaseRow;
  private readonly rejectRow;
  private readonly deferRow;
  private readonly renewRow;
  private readonly insertError;

  constructor(
    db: SqliteDatabase,
    private readonly queues: QueueRegistry,
  ) {
    this.receipts = new Receipts(db);
    this.completeRow = db.prepare(`DELETE FROM messages WHERE ${FENCE} ${GROUPED}`);
    // A kept row keeps the token it was completed with: it is the completion's receipt.
    this.keepRow = db.prepare(`
      UPDATE messages SET state = 'completed', result = @result, expires_at = @now + @retain, settled_at = @now,
        locked_until = 0
      WHERE ${FENCE} ${GROUPED}`);
    this.keptCompletion = db.prepare(
      "SELECT 1 FROM messages WHERE id = ? AND queue = ? AND state = 'completed' AND lock_token = ? AND settled_at > ?",
    );
    const dead = `delivery_count >= ${EFFECTIVE_MAX}`;
    this.abandonRow = db.prepare(`
      UPDATE messages SET
        state = CASE WHEN ${dead} THEN 'dead_lettered' WHEN @delay > 0 THEN 'scheduled' ELSE 'active' END,
        visible_at = CASE WHEN ${dead} THEN visible_at WHEN @delay > 0 THEN @now + @delay ELSE @now END,
        dead_letter_reason = CASE WHEN ${dead} THEN '${MAX_DELIVERY_REASON}' ELSE dead_letter_reason END,
        settled_at = CASE WHEN ${dead} THEN @now ELSE settled_at END,
        lock_token = NULL, locked_until = 0
      WHERE ${FENCE}
      RETURNING state, visible_at, group_id IS NOT NULL AS grouped`);
    this.releaseRow = db.prepare(`
      UPDATE messages SET
        state = CASE WHEN @delay > 0 THEN 'scheduled' ELSE 'active' END,
        visible_at = CASE WHEN @delay > 0 THEN @now + @delay ELSE @now END,
        delivery_count = max(delivery_count - 1, 0), lock_token = NULL, locked_until = 0
      WHERE ${FENCE}
      RETURNING state, visible_at`);
    this.rejectRow = db.prepare(`
      UPDATE messages SET state = 'dead_lettered', dead_letter_reason = @reason, dead_letter_description = @description,
        settled_at = @now, lock_token = NULL, locked_until = 0
      WHERE ${FENCE} ${GROUPED}`);
    this.deferRow = db.prepare(
      `UPDATE messages SET state = 'deferred', lock_token = NULL, locked_until = 0 WHERE ${FENCE}`,
    );
    this.renewRow = db.prepare(`
      UPDATE messages SET locked_until = max(locked_until, @now + ${leaseDuration({ own: "lock_duration_ms", queue: "@lock", cap: "@cap" })})
      WHERE ${FENCE} RETURNING locked_until, cancel_requested`);
    // Only while the caller holds the live lease: a replayed settlement records nothing twice.
    this.insertError = db.prepare(`
      INSERT INTO message_errors (seq_number, attempt, error, failed_at)
      SELECT id, delivery_count, @error, @now FROM messages WHERE ${FENCE}`);
  }

  /** Where a changed row stood in its queue's order (see `Settled`): nowhere when none changed. */
  private placeOf(queue: string, row: GroupedRow): LinePlace {
    if (row === undefined) return {};
    return { grouped: row.grouped === 1, strict: this.queues.get(queue)?.ordering_mode === "strict_fifo" };
  }

  private receipted(f: Fence, receipt: Receipt | undefined, changes: number): Outcome {
    if (changes > 0 && receipt)
      this.receipts.write(f.queue, f.seq, f.token, receipt.operation, receipt.args, f.now);
    return applied(changes);
  }

  complete(a: Fence & { keep?: KeepOptions; receipt?: Receipt }): Settled {
    const { seq, queue, token, now, keep } = a;
    const row = (
      keep
        ? this.keepRow.get({ seq, queue, token, now, retain: keep.retainMs, result: keep.result })
        : this.completeRow.get({ seq, queue, token, now })
    ) as GroupedRow;
    return { outcome: this.receipted(a, a.receipt, row ? 1 : 0), ...this.placeOf(queue, row) };
  }

  completeBatch(a: {
    queue: string;
    now: number;
    items: { seq: number; token: string; keep?: KeepOptions; receipt?: Receipt }[];
  }): BatchSettled {
    const place: LinePlace = {};
    const outcomes = a.items.map((i) => {
      const done = this.complete({ queue: a.queue, now: a.now, ...i });
      place.grouped ||= done.grouped;
      place.strict ||= done.strict;
      return done.outcome;
    });
    return { outcomes, ...place };
  }

  abandon(
    a: Fence & { delayMs: number; countDelivery: boolean; error: string | null; receipt: Receipt },
  ): Abandoned {
    const q = this.queues.get(a.queue);
    if (!q) return { outcome: "missed" };
    const { seq, queue, token, now } = a;
    if (a.error) this.insertError.run({ queue, seq, token, error: a.error, now });
    const row = (
      a.countDelivery
        ? this.abandonRow.get({ seq, queue, token, now, delay: a.delayMs, max: q.max_delivery_count })
        : this.releaseRow.get({ seq, queue, token, now, delay: a.delayMs })
    ) as { state: Abandoned["state"]; visible_at: number; grouped: number } | undefined;
    if (!row) return { outcome: "missed" };
    this.receipts.write(queue, seq, token, a.receipt.operation, a.receipt.args, now);
    return {
      outcome: "applied",
      state: row.state,
      visibleAt: row.visible_at,
      ...this.placeOf(queue, row),
    };
  }

  reject(
    a: Fence & { reason: string; description: string | null; error: string | null; receipt: Receipt },
  ): Settled {
    const { seq, queue, token, now } = a;
    if (a.error) this.insertError.run({ queue, seq, token, error: a.error, now });
    const row = this.rejectRow.get({
      seq,
      queue,
      token,
      now,
      reason: a.reason,
      description: a.description,
    }) as GroupedRow;
    return { outcome: this.receipted(a, a.receipt, row ? 1 : 0), ...this.placeOf(queue, row) };
  }

  defer(a: Fence & { receipt: Receipt }): Outcome {
    const { seq, queue, token, now } = a;
    return this.receipted(a, a.receipt, this.deferRow.run({ seq, queue, token, now }).changes);
  }

  hasReceipt(a: Fence & Receipt): boolean {
    if (this.receipts.has(a.queue, a.seq, a.token, a.operation, a.args, a.now)) return true;
    return (
      a.operation === "completed" &&
      this.keptCompletion.get(a.seq, a.queue, a.token, a.now - RECEIPT_TTL_MS) !== undefined
    );
  }

  renew(a: Fence & { capMs: number }): Renewed | null | undefined {
    const q = this.queues.get(a.queue);
    if (!q) return undefined;
    if (!a.token) return null;
    return this.renewOne(a.queue, a.seq, a.token, a.now, q.lock_duration_ms, a.capMs);
  }

  renewBatch(a: {
    queue: string;
    now: number;
    capMs: number;
    items: { seq: number; token: string }[];
  }): (Renewed | null)[] | undefined {
    const q = this.queues.get(a.queue);
    if (!q) return undefined;
    return a.items.map((i) =>
      i.token ? this.renewOne(a.queue, i.seq, i.token, a.now, q.lock_duration_ms, a.capMs) : null,
    );
  }

  private renewOne(queue: string, seq: number, token: string, now: number, lock: number, cap: number) {
    const row = this.renewRow.get({ seq, queue, token, now, lock, cap }) as
      | { locked_until: number; cancel_requested: number }
      | undefined;
    return row ? { lockedUntil: row.locked_until, cancelRequested: row.cancel_requested === 1 } : null;
  }
}
