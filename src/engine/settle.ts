import { LockLostError } from "../contract/errors.js";
import type { CompleteResult, LockRef, RenewResult } from "../contract/types.js";
import type { SqliteDatabase } from "../store/database.js";
import type { QueueRow } from "./queue-config.js";
import { Receipts, receiptArgs, type SettleOperation } from "./receipts.js";

/** The live-lease fence: the current token and a lease that has not lapsed (equality is lapsed). */
const FENCE =
  "id = @seq AND queue = @queue AND lock_token = @token AND state = 'locked' AND locked_until > @now";

export const DEFAULT_REJECT_REASON = "AppRequested";
export const MAX_DELIVERY_REASON = "MaxDeliveryCountExceeded";

/** What a settlement did, for the caller's after-commit notifications. */
export interface SettleEffect {
  /** The message became claimable now (wake waiters). */
  activated?: boolean;
  /** The message was parked until this time (arm the scheduler). */
  scheduledFor?: number;
  /** A row was deleted by Complete (count it). */
  completed?: boolean;
}

/**
 * Fenced settlement: each verb changes the row only while the caller holds the live lease, writes a
 * receipt in the same transaction, and answers an exact replay from the receipt.
 */
export class Settler {
  private readonly receipts: Receipts;
  private readonly completeRow;
  private readonly abandonRow;
  private readonly rejectRow;
  private readonly deferRow;
  private readonly renewRow;
  private readonly cancelRow;

  constructor(db: SqliteDatabase) {
    this.receipts = new Receipts(db);
    this.completeRow = db.prepare(`DELETE FROM messages WHERE ${FENCE}`);
    this.abandonRow = db.prepare(`
      UPDATE messages SET
        state = CASE WHEN delivery_count >= @max THEN 'dead_lettered' WHEN @delay > 0 THEN 'scheduled' ELSE 'active' END,
        visible_at = CASE WHEN delivery_count >= @max THEN visible_at WHEN @delay > 0 THEN @now + @delay ELSE @now END,
        dead_letter_reason = CASE WHEN delivery_count >= @max THEN '${MAX_DELIVERY_REASON}' ELSE dead_letter_reason END,
        lock_token = NULL, locked_until = 0
      WHERE ${FENCE}
      RETURNING state, visible_at`);
    this.rejectRow = db.prepare(`
      UPDATE messages SET state = 'dead_lettered', dead_letter_reason = @reason, dead_letter_description = @description,
        lock_token = NULL, locked_until = 0
      WHERE ${FENCE}`);
    this.deferRow = db.prepare(
      `UPDATE messages SET state = 'deferred', lock_token = NULL, locked_until = 0 WHERE ${FENCE}`,
    );
    this.renewRow = db.prepare(`
      UPDATE messages SET locked_until = max(locked_until, @now + @lock) WHERE ${FENCE} RETURNING locked_until`);
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
  ): SettleEffect {
    if (!token) throw new LockLostError();
    const effect = apply();
    if (effect) {
      this.receipts.write(queue, seq, token, op, args, now);
      return effect;
    }
    if (this.receipts.has(queue, seq, token, op, args, now)) return {};
    throw new LockLostError();
  }

  complete(queue: string, seq: number, token: string, now: number): SettleEffect {
    return this.fenced(queue, seq, token, now, "completed", "", () =>
      this.completeRow.run({ seq, queue, token, now }).changes > 0 ? { completed: true } : undefined,
    );
  }

  completeBatch(
    queue: string,
    items: LockRef[],
    now: number,
  ): { results: CompleteResult[]; completed: number } {
    let completed = 0;
    const results = items.map(({ seqNumber, lockToken }) => {
      if (!lockToken) return { seqNumber, ok: false };
      try {
        if (this.complete(queue, seqNumber, lockToken, now).completed) completed++;
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
  ): SettleEffect {
    return this.fenced(queue, seq, token, now, "abandoned", receiptArgs(delay), () => {
      if (!q) return undefined;
      const row = this.abandonRow.get({ seq, queue, token, now, delay, max: q.max_delivery_count }) as
        | { state: string; visible_at: number }
        | undefined;
      if (!row) return undefined;
      if (row.state === "active") return { activated: true };
      if (row.state === "scheduled") return { scheduledFor: row.visible_at };
      return {};
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
        ? {}
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
    const row = this.renewRow.get({ seq, queue: q.name, token, now, lock: q.lock_duration_ms }) as
      | { locked_until: number }
      | undefined;
    if (!row) throw new LockLostError();
    return row.locked_until;
  }

  renewBatch(q: QueueRow, items: LockRef[], now: number): RenewResult[] {
    return items.map(({ seqNumber, lockToken }) => {
      if (!lockToken) return { seqNumber, ok: false };
      const row = this.renewRow.get({
        seq: seqNumber,
        queue: q.name,
        token: lockToken,
        now,
        lock: q.lock_duration_ms,
      }) as { locked_until: number } | undefined;
      return row && row.locked_until > now
        ? { seqNumber, ok: true, lockedUntil: row.locked_until }
        : { seqNumber, ok: false };
    });
  }

  /** Deletes a never-delivered scheduled message; false when there is none. */
  cancel(queue: string, seq: number): boolean {
    return this.cancelRow.run(seq, queue).changes > 0;
  }
}
