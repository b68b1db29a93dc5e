import { LockLostError, NotFoundError } from "../../contract/errors.js";
import type { CompleteResult, LockRef, RenewResult } from "../../contract/types.js";
import { DEFAULT_REJECT_REASON } from "../limits.js";
import { ask, type Ops, type Verb, type WriteScope } from "../port.js";
import { RECEIPT_TTL_MS, receiptArgs, type SettleOperation } from "../receipts.js";

/** What `complete` keeps: the message stays `completed` with its result for `retainMs`. */
export interface KeepOptions {
  retainMs: number;
  result: Buffer | null;
}

/** The lease a settlement acts under: it changes the row only while `token` holds it. */
export interface Fence {
  queue: string;
  seq: number;
  token: string;
  now: number;
}

/** The receipt a settlement writes with its change, so that an exact replay succeeds. */
export interface Receipt {
  operation: SettleOperation;
  args: string;
}

/**
 * What a fenced statement found: it changed the row (`applied`), it did not but the receipt of the
 * identical request exists (`replayed`, for dialects that look in the same statement), or neither
 * (`missed`: the core then looks for the receipt once more before answering `lock_lost`).
 */
export type Outcome = "applied" | "replayed" | "missed";

/**
 * Where a settled row stood in its queue's order, as the store answers it: the row has a group
 * (`grouped`), its queue is `strict_fifo` (`strict`). See `heldTheLine`.
 */
export interface LinePlace {
  grouped?: boolean;
  strict?: boolean;
}

/**
 * Whether a settled row held a line: a grouped row holds its group's, any row of a strict queue
 * the queue's. Settling it may make the next message of the line claimable, which must wake
 * receivers parked on the queue (nothing else announces it).
 */
export const heldTheLine = (p: LinePlace): boolean => p.grouped === true || p.strict === true;

/** A fenced settlement's outcome, and where the row it changed stood (see `heldTheLine`). */
export interface Settled extends LinePlace {
  outcome: Outcome;
}

/** A settlement of many rows of one queue: an outcome per item, and whether any changed row was grouped. */
export interface BatchSettled extends LinePlace {
  outcomes: Outcome[];
}

/** A message's state after an abandon that applied, and where it stood (see `heldTheLine`). */
export interface Abandoned extends LinePlace {
  outcome: Outcome;
  state?: "active" | "scheduled" | "dead_lettered";
  visibleAt?: number;
}

/** A renewal: whether the queue exists, and the lease's new end when the fence held. */
export interface Renewed {
  lockedUntil: number;
  cancelRequested: boolean;
}

/** The settlement statements a dialect provides (each one statement's worth of work, atomically). */
export interface SettleOps {
  /**
   * Deletes the row held under the fence, or with `keep` marks it `completed` with its result,
   * keeping the lock token (a kept row answers a replay while `receipt` is absent).
   */
  complete(a: Fence & { keep?: KeepOptions; receipt?: Receipt }): Settled;
  /**
   * `complete` for many rows of one queue: an outcome per item, in order, whether any row it
   * changed had a group, and whether the queue is strict.
   */
  completeBatch(a: {
    queue: string;
    now: number;
    items: { seq: number; token: string; keep?: KeepOptions; receipt?: Receipt }[];
  }): BatchSettled;
  /**
   * Gives the delivery back: active now, `scheduled` after `delayMs`, or dead-lettered at the
   * delivery limit (a counted delivery only). `countDelivery: false` takes the delivery back.
   * Records `error` (the attempt's failure) when it applied.
   */
  abandon(
    a: Fence & { delayMs: number; countDelivery: boolean; error: string | null; receipt: Receipt },
  ): Abandoned;
  /** Dead-letters the row with `reason` and `description`; records `error` when it applied. */
  reject(
    a: Fence & { reason: string; description: string | null; error: string | null; receipt: Receipt },
  ): Settled;
  /** Parks the row in `deferred`. */
  defer(a: Fence & { receipt: Receipt }): Outcome;
  /** Whether the identical request's receipt (or, for a completion, its kept row) exists. */
  hasReceipt(a: Fence & Receipt): boolean;
  /**
   * Extends the lease by the message's (else the queue's) lock duration, capped by `capMs` when it
   * is above 0, never shortening it. `undefined` when the queue does not exist; `null` when the
   * fence did not hold.
   */
  renew(a: Fence & { capMs: number }): Renewed | null | undefined;
  /** `renew` for many rows of one queue; `undefined` when the queue does not exist. */
  renewBatch(a: {
    queue: string;
    now: number;
    capMs: number;
    items: { seq: number; token: string }[];
  }): (Renewed | null)[] | undefined;
}

/**
 * What a fenced statement's outcome means: true when it changed the row, false for an exact replay,
 * else `lock_lost`. Callers test `"applied"` first (`outcome === "applied" || (yield* fenced(…))`):
 * the common case then makes no generator.
 */
function* fenced(fence: Fence, receipt: Receipt, outcome: Outcome): Verb<boolean> {
  if (outcome === "applied") return true;
  if (outcome === "replayed") return false;
  // A concurrent identical request may have committed while the statement waited: look again.
  const look = {
    queue: fence.queue,
    seq: fence.seq,
    token: fence.token,
    now: fence.now,
    operation: receipt.operation,
    args: receipt.args,
  };
  if (yield* ask((o) => o.settle.hasReceipt(look))) return false;
  throw new LockLostError();
}

const COMPLETED: Receipt = { operation: "completed", args: "" };

/**
 * A completion kept at least as long as a receipt lives needs no receipt: its row, which keeps the
 * lock token, answers an exact replay until the receipt would have expired. That spares a job
 * drain a third of its writes. A shorter retention may delete the row first: it writes one.
 */
function completionReceipt(keep: KeepOptions | undefined): Receipt | undefined {
  return keep === undefined || keep.retainMs < RECEIPT_TTL_MS ? COMPLETED : undefined;
}

export function* complete(
  s: WriteScope,
  queue: string,
  seq: number,
  token: string,
  keep?: KeepOptions,
): Verb<void> {
  if (!token) throw new LockLostError();
  // Built once, without spreads: this is every message's completion.
  const a = { queue, seq, token, now: s.now, keep, receipt: completionReceipt(keep) };
  const done = (yield (o: Ops) => o.settle.complete(a)) as Settled;
  if (done.outcome === "applied" || (yield* fenced(a, COMPLETED, done.outcome))) {
    s.effects.completed(queue, 1);
    s.effects.settled([seq]);
    if (heldTheLine(done)) s.effects.activated(queue);
  }
}

/** Completes `items`, handing storage at most `step` of them a statement (see `SETTLE_STEP_ITEMS`). */
export function* completeBatch(
  s: WriteScope,
  queue: string,
  items: (LockRef & { keep?: KeepOptions })[],
  step: number,
): Verb<CompleteResult[]> {
  const live = items.filter((i) => i.lockToken);
  const outcomes: Outcome[] = [];
  const place: LinePlace = {};
  // At most `step` a statement: a long write may let the event loop turn between them.
  for (let from = 0; from < live.length; from += step) {
    const part = live.slice(from, from + step).map((i) => ({
      seq: i.seqNumber,
      token: i.lockToken,
      keep: i.keep,
      receipt: completionReceipt(i.keep),
    }));
    const done = yield* ask((o) => o.settle.completeBatch({ queue, now: s.now, items: part }));
    for (const outcome of done.outcomes) outcomes.push(outcome);
    place.grouped ||= done.grouped;
    place.strict ||= done.strict;
  }
  const ok = new Map<LockRef, boolean>();
  const done: number[] = [];
  for (const [k, item] of live.entries()) {
    const outcome = outcomes[k] ?? "missed";
    if (outcome === "applied") done.push(item.seqNumber);
    ok.set(
      item,
      outcome !== "missed" ||
        (yield* ask((o) =>
          o.settle.hasReceipt({
            queue,
            seq: item.seqNumber,
            token: item.lockToken,
            now: s.now,
            ...COMPLETED,
          }),
        )),
    );
  }
  if (done.length > 0) {
    s.effects.completed(queue, done.length);
    s.effects.settled(done);
    if (heldTheLine(place)) s.effects.activated(queue);
  }
  return items.map((i) => ({ seqNumber: i.seqNumber, ok: ok.get(i) === true }));
}

export interface AbandonInput {
  delayMs: number;
  /** False gives the delivery back (claimed but never processed). */
  countDelivery: boolean;
  error?: string;
}

export function* abandon(
  s: WriteScope,
  queue: string,
  seq: number,
  token: string,
  a: AbandonInput,
): Verb<void> {
  if (!token) throw new LockLostError();
  const fence = { queue, seq, token, now: s.now };
  const receipt: Receipt = {
    operation: "abandoned",
    args: a.countDelivery ? receiptArgs(a.delayMs) : receiptArgs(a.delayMs, "released"),
  };
  const row = yield* ask((o) =>
    o.settle.abandon({
      ...fence,
      delayMs: a.delayMs,
      countDelivery: a.countDelivery,
      error: a.error || null,
      receipt,
    }),
  );
  if (row.outcome !== "applied" && !(yield* fenced(fence, receipt, row.outcome))) return;
  if (row.state === "active") s.effects.activated(queue);
  else if (row.state === "scheduled" && row.visibleAt !== undefined) s.effects.scheduled(row.visibleAt);
  else if (row.state === "dead_lettered") {
    s.effects.settled([seq]);
    if (heldTheLine(row)) s.effects.activated(queue);
  }
}

export interface RejectInput {
  reason?: string;
  description?: string;
  error?: string;
}

export function* reject(
  s: WriteScope,
  queue: string,
  seq: number,
  token: string,
  a: RejectInput,
): Verb<void> {
  if (!token) throw new LockLostError();
  const fence = { queue, seq, token, now: s.now };
  const reason = a.reason || DEFAULT_REJECT_REASON;
  const description = a.description ?? "";
  const receipt: Receipt = { operation: "dead_lettered", args: receiptArgs(reason, description) };
  const done = yield* ask((o) =>
    o.settle.reject({ ...fence, reason, description: description || null, error: a.error || null, receipt }),
  );
  if (done.outcome === "applied" || (yield* fenced(fence, receipt, done.outcome))) {
    s.effects.settled([seq]);
    if (heldTheLine(done)) s.effects.activated(queue);
  }
}

export function* defer(s: WriteScope, queue: string, seq: number, token: string): Verb<void> {
  if (!token) throw new LockLostError();
  const fence = { queue, seq, token, now: s.now };
  const receipt: Receipt = { operation: "deferred", args: "" };
  const outcome = yield* ask((o) => o.settle.defer({ ...fence, receipt }));
  if (outcome !== "applied") yield* fenced(fence, receipt, outcome);
}

const QUEUE_NOT_FOUND = "mqlite: queue not found";

/** Renewals have no receipts: a renew after a settlement is `lock_lost`. */
export function* renew(s: WriteScope, queue: string, seq: number, token: string): Verb<void> {
  const row = yield* ask((o) => o.settle.renew({ queue, seq, token, now: s.now, capMs: 0 }));
  if (row === undefined) throw new NotFoundError(QUEUE_NOT_FOUND);
  if (!token || row === null) throw new LockLostError();
}

/** Renews each lock; `capMs` (0: none) caps the lease each one gets. */
export function* renewBatch(
  s: WriteScope,
  queue: string,
  items: LockRef[],
  capMs: number,
): Verb<RenewResult[]> {
  const rows = yield* ask((o) =>
    o.settle.renewBatch({
      queue,
      now: s.now,
      capMs,
      items: items.map((i) => ({ seq: i.seqNumber, token: i.lockToken ?? "" })),
    }),
  );
  if (rows === undefined) throw new NotFoundError(QUEUE_NOT_FOUND);
  return items.map(({ seqNumber, lockToken }, k) => {
    const row = lockToken ? rows[k] : null;
    // A lease that ends now is already lost.
    if (!row || row.lockedUntil <= s.now) return { seqNumber, ok: false };
    const out: RenewResult = { seqNumber, ok: true, lockedUntil: row.lockedUntil };
    if (row.cancelRequested) out.cancelRequested = true;
    return out;
  });
}
