import { LockLostError } from "../../contract/errors.js";
import type { CompleteResult, LockRef, RenewResult } from "../../contract/types.js";
import { leaseDuration } from "../../core/lease.js";
import { leaseFence } from "../../core/lease-fence.js";
import { DEFAULT_REJECT_REASON, MAX_DELIVERY_REASON } from "../../core/limits.js";
import type { QueueRow } from "../../core/queue-config.js";
import { RECEIPT_TTL_MS, receiptArgs, type SettleOperation } from "../../core/receipts.js";
import type { SqliteDatabase } from "./database.js";
import { Receipts } from "./receipts.js";

const FENCE = leaseFence({ seq: "@seq", queue: "@queue", token: "@token" });

/** A message's own delivery limit when it has one, else the queue's (`@max`). */
export const EFFECTIVE_MAX = "(CASE WHEN max_deliveries > 0 THEN max_deliveries ELSE @max END)";

/** What a settlement did, for the caller's after-commit notifications. */
export interface SettleEffect {
  /** The message became claimable now (wake waiters). */
  activated?: boolean;
  /** The message was parked until this time (arm the scheduler). */
  scheduledFor?: number;
  /** A row was deleted by Complete (count it). */
  completed?: boolean;
  /** The message reached a final state (wake `awaitSettled`). */
  settled?: boolean;
}

/** What `complete` keeps: the message stays `completed` with its result for `retainMs`. */
export interface KeepOptions {
  retainMs: number;
  result: Buffer | null;
}

/**
 * Fenced settlement: each verb changes the row only while the caller holds the live lease, writes a
 * receipt in the same transaction, and answers an exact replay from the receipt.
 */
export class Settler {
  private readonly receipts: Receipts;
  private readonly completeRow;
  private readonly keepRow;
  private readonly keptCompletion;
  private readonly abandonRow;
  private readonly releaseRow;
  private readonly rejectRow;
  private readonly deferRow;
  private readonly renewRow;
  private readonly cancelRow;

  constructor(db: SqliteDatabase) {
    this.receipts = new Receipts(db);
    this.completeRow = db.prepare(`DELETE FROM messages WHERE ${FENCE}`);
    // A kept row keeps the token it was completed with: it is the completion's receipt (see `complete`).
    this.keepRow = db.prepare(`
      UPDATE messages SET state = 'completed', result = @result, expires_at = @now + @retain, settled_at = @now,
        locked_until = 0
      WHERE ${FENCE}`);
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
      RETURNING state, visible_at`);
    // Gives the delivery back: the message was claimed but never processed.
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
      WHERE ${FENCE}`);
    this.deferRow = db.prepare(
      `UPDATE messages SET state = 'deferred', lock_token = NULL, locked_until = 0 WHERE ${FENCE}`,
    );
    this.renewRow = db.prepare(`
      UPDATE messages SET locked_until = max(locked_until, @now + ${leaseDuration({ own: "lock_duration_ms", queue: "@lock", cap: "@cap" })})
      WHERE ${FENCE} RETURNING locked_until, cancel_requested`);
    this.cancelRow = db.prepare(
      "DELETE FROM messages WHERE id = ? AND queue = ? AND state = 'scheduled' AND delivery_count = 0",
    );
  }

  private fenced(
    queue: string,
    seq: number,
    token: string,
    now: number,
    op: SettleOperation,
    args: string,
    apply: () => SettleEffect | undefined,
    receipt = true,
  ): SettleEffect {
    if (!token) throw new LockLostError();
    const effect = apply();
    if (effect) {
      if (receipt) this.receipts.write(queue, seq, token, op, args, now);
      return effect;
    }
    if (this.receipts.has(queue, seq, token, op, args, now)) return {};
    if (op === "completed" && this.keptCompletion.get(seq, queue, token, now - RECEIPT_TTL_MS)) return {};
    throw new LockLostError();
  }

  /**
   * A completion kept at least as long as a receipt lives needs no receipt: its row, which keeps the
   * lock token, answers an exact replay until the receipt would have expired. That spares a job
   * drain a third of its writes. A shorter retention may delete the row first: it writes one.
   */
  complete(queue: string, seq: number, token: string, now: number, keep?: KeepOptions): SettleEffect {
    const receipt = keep === undefined || keep.retainMs < RECEIPT_TTL_MS;
    return this.fenced(
      queue,
      seq,
      token,
      now,
      "completed",
      "",
      () => {
        const changed = keep
          ? this.keepRow.run({ seq, queue, token, now, retain: keep.retainMs, result: keep.result }).changes
          : this.completeRow.run({ seq, queue, token, now }).changes;
        return changed > 0 ? { completed: true, settled: true } : undefined;
      },
      receipt,
    );
  }

  completeBatch(
    queue: string,
    items: (LockRef & { keep?: KeepOptions })[],
    now: number,
  ): { results: CompleteResult[]; completed: number } {
    let completed = 0;
    const results = items.map(({ seqNumber, lockToken, keep }) => {
      if (!lockToken) return { seqNumber, ok: false };
      try {
        if (this.complete(queue, seqNumber, lockToken, now, keep).completed) completed++;
        return { seqNumber, ok: true };
      } catch (err) {
        if (err instanceof LockLostError) return { seqNumber, ok: false };
        throw err;
      }
    });
    return { results, completed };
  }

  /** `q` is undefined for an unknown queue: then nothing can match and the answer is `lock_lost`. */
  abandon(
    q: QueueRow | undefined,
    queue: string,
    seq: number,
    token: string,
    delay: number,
    now: number,
    countDelivery = true,
  ): SettleEffect {
    const args = countDelivery ? receiptArgs(delay) : receiptArgs(delay, "released");
    return this.fenced(queue, seq, token, now, "abandoned", args, () => {
      if (!q) return undefined;
      const row = (
        countDelivery
          ? this.abandonRow.get({ seq, queue, token, now, delay, max: q.max_delivery_count })
          : this.releaseRow.get({ seq, queue, token, now, delay })
      ) as { state: string; visible_at: number } | undefined;
      if (!row) return undefined;
      if (row.state === "active") return { activated: true };
      if (row.state === "scheduled") return { scheduledFor: row.visible_at };
      return { settled: true };
    });
  }

  reject(
    queue: string,
    seq: number,
    token: string,
    reason: string,
    description: string,
    now: number,
  ): SettleEffect {
    const why = reason || DEFAULT_REJECT_REASON;
    return this.fenced(queue, seq, token, now, "dead_lettered", receiptArgs(why, description), () =>
      this.rejectRow.run({ seq, queue, token, now, reason: why, description: description || null }).changes >
      0
        ? { settled: true }
        : undefined,
    );
  }

  defer(queue: string, seq: number, token: string, now: number): SettleEffect {
    return this.fenced(queue, seq, token, now, "deferred", "", () =>
      this.deferRow.run({ seq, queue, token, now }).changes > 0 ? {} : undefined,
    );
  }

  /** Renewals have no receipts: a renew after a settlement is `lock_lost`. Returns the new deadline. */
  renew(q: QueueRow, seq: number, token: string, now: number): number {
    if (!token) throw new LockLostError();
    const row = this.renewRow.get({ seq, queue: q.name, token, now, lock: q.lock_duration_ms, cap: 0 }) as
      | { locked_until: number }
      | undefined;
    if (!row) throw new LockLostError();
    return row.locked_until;
  }

  /** Renews each lock; `leaseCapMs` (0: none) caps the lease each one gets. */
  renewBatch(q: QueueRow, items: LockRef[], now: number, leaseCapMs = 0): RenewResult[] {
    return items.map(({ seqNumber, lockToken }) => {
      if (!lockToken) return { seqNumber, ok: false };
      const row = this.renewRow.get({
        seq: seqNumber,
        queue: q.name,
        token: lockToken,
        now,
        lock: q.lock_duration_ms,
        cap: leaseCapMs,
      }) as { locked_until: number; cancel_requested: number } | undefined;
      if (!row || row.locked_until <= now) return { seqNumber, ok: false };
      const out: RenewResult = { seqNumber, ok: true, lockedUntil: row.locked_until };
      if (row.cancel_requested) out.cancelRequested = true;
      return out;
    });
  }

  /** Deletes a never-delivered scheduled message; false when there is none. */
  cancel(queue: string, seq: number): boolean {
    return this.cancelRow.run(seq, queue).changes > 0;
  }
}
