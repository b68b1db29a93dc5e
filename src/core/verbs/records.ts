import { LockLostError, MessageTooLargeError } from "../../contract/errors.js";
import type { AttemptError, CancelOutcome, MessageRecord } from "../../contract/job-service.js";
import { type MessageState, SETTLED_STATES } from "../../contract/types.js";
import { ANSWER_BUDGET_BYTES, AnswerBudget } from "../answer-budget.js";
import { type RecordRow, toRecord } from "../message-record.js";
import { NewestKept } from "../newest-kept.js";
import { ask, type Verb, type WriteScope } from "../port.js";
import { RECEIPT_TTL_MS } from "../receipts.js";

/** A validated `browse`: which rows, in which order, which page. */
export interface BrowseQuery {
  /** Absent: every queue (never empty: an empty list matches nothing and is answered without a read). */
  queues?: string[];
  states?: MessageState[];
  /** Only (true) or no (false) scheduled retries of a failed delivery. */
  backingOff?: boolean;
  subject?: string;
  /** Only messages settled before this time. */
  settledBefore?: number;
  /** Newest first by sequence number, or by settlement time. */
  order: "newest" | "settled";
  limit: number;
  offset: number;
}

/** A validated `deleteSettled`: the settled rows of one queue it deletes. */
export interface DeleteSettledQuery {
  states: MessageState[];
  /** Only rows settled at least this long ago (0: any). */
  olderThanMs: number;
  seqNumbers?: number[];
  subject?: string;
  /** Keeps the newest this many of the matching rows (retention by count). */
  keepNewest?: number;
}

/** Which settled rows of a queue a step of `deleteSettled` matches, besides their state. */
export interface SettledMatch {
  queue: string;
  /** Only rows settled before this time (absent: any). */
  settledBefore?: number;
  seqNumbers?: number[];
  subject?: string;
}

/** A settled row's place in the order retention by count keeps: latest settled, then highest number. */
export interface SettledMark {
  settledAt: number;
  id: number;
}

/** One statement of `deleteSettled`: see `RecordOps.deleteSettled`. */
export interface SettledStep extends SettledMatch {
  state: MessageState;
  below?: SettledMark;
  after: number;
  limit: number;
  receiptsSince: number;
}

/** A lease a record statement acts under (the live lock token of the message). */
interface Held {
  queue: string;
  seq: number;
  token: string;
}

/** One recorded failure of a delivery. */
export interface ErrorRow {
  seq_number: number;
  attempt: number;
  error: string;
  failed_at: number;
}

/**
 * The statements of the job records (cancel, progress, reading records, deleting settled ones,
 * promoting and removing messages). Reads of records may stop after the row whose bytes cross
 * `ANSWER_BUDGET_BYTES` (the core cuts the answer there anyway).
 */
export interface RecordOps {
  /** Cancels the message held under the lease: `cancelled`, kept `retainMs`. True when it did. */
  cancelHeld(a: Held & { now: number; retainMs: number }): boolean;
  /** Cancels the message if it waits (active, scheduled or deferred). True when it did. */
  cancelWaiting(a: { queue: string; seq: number; now: number; retainMs: number }): boolean;
  /** Flags a locked message for cancellation (its holder sees it on renew). True when it did. */
  requestCancel(a: { queue: string; seq: number }): boolean;
  /** Records the progress of the message held under the lease. True when the lease held. */
  setProgress(a: Held & { progress: number }): boolean;
  /** The records of these messages, by sequence number. */
  records(seqs: number[]): RecordRow[];
  /** The states of those of these messages that exist. */
  states(seqs: number[]): { id: number; state: MessageState }[];
  /** Records across queues, as `q` selects. */
  browse(q: BrowseQuery): RecordRow[];
  /** A message's recorded failures, oldest first. */
  errors(seq: number): ErrorRow[];
  /**
   * The place of the `keep`-th newest (latest settled, then highest number) of the settled rows
   * of `states` that `a` matches; undefined when no more than `keep - 1` match.
   */
  keptMark(a: SettledMatch & { states: MessageState[]; keep: number }): SettledMark | undefined;
  /**
   * The keys of the first `limit` rows in `state` numbered above `after` that `a` matches, in
   * order of number: `[settled_at, id]` each (retention by count, its mark found in steps).
   */
  settledKeys(a: SettledMatch & { state: MessageState; after: number; limit: number }): [number, number][];
  /**
   * Deletes, in order of sequence number, the first `limit` rows in `state` numbered above
   * `after` that `a` matches (and, given `below`, that come after it in the kept order). First
   * writes, for the kept completions among them settled after `receiptsSince`, the receipts those
   * rows stood in for. `through`: the highest number it took when it took `limit` rows (more may
   * follow), absent when it took fewer.
   */
  deleteSettled(a: SettledStep): { deleted: number; through?: number };
  /** Makes these scheduled messages of `queue` active now. Returns how many. */
  promote(a: { queue: string; seqs: number[]; now: number }): number;
  /**
   * Deletes these messages of `queue` that are not locked, writing the receipts of the kept
   * completions among them settled after `receiptsSince`. Returns the deleted ones' numbers.
   */
  remove(a: { queue: string; seqs: number[]; receiptsSince: number }): number[];
}

/**
 * Cancels a message. With the lock token: the holder gives it up (`lock_lost` when it no longer
 * holds it). Without: a waiting message is cancelled at once, a locked one is asked to stop.
 */
export function* cancelMessage(
  s: WriteScope,
  queue: string,
  seq: number,
  token: string | undefined,
  retainMs: number,
): Verb<CancelOutcome> {
  const now = s.now;
  if (token) {
    if (!(yield* ask((o) => o.records.cancelHeld({ queue, seq, token, now, retainMs })))) {
      throw new LockLostError();
    }
  } else if (!(yield* ask((o) => o.records.cancelWaiting({ queue, seq, now, retainMs })))) {
    return (yield* ask((o) => o.records.requestCancel({ queue, seq }))) ? "requested" : "none";
  }
  s.effects.settled([seq]);
  // A cancelled locked, deferred or scheduled row may have held its group's line (or a strict queue's).
  s.effects.activated(queue);
  return "cancelled";
}

export function* setProgress(
  _s: WriteScope,
  queue: string,
  seq: number,
  token: string,
  progress: number,
): Verb<void> {
  if (!token || !(yield* ask((o) => o.records.setProgress({ queue, seq, token, progress })))) {
    throw new LockLostError();
  }
}

/** The records of these messages; refused whole when they would not fit one answer. */
export function* getMessages(seqs: number[]): Verb<MessageRecord[]> {
  if (seqs.length === 0) return [];
  const rows = yield* ask((o) => o.records.records(seqs));
  const budget = new AnswerBudget();
  const out: MessageRecord[] = [];
  for (const row of rows) {
    out.push(toRecord(row));
    // Leaving out messages that exist would read as "unknown": refuse the whole answer instead.
    if (!budget.add(row) && out.length < seqs.length) {
      throw new MessageTooLargeError(
        `mqlite: the answer would be over ${ANSWER_BUDGET_BYTES} bytes; ask for fewer messages at once`,
      );
    }
  }
  return out;
}

/** A page of records across queues; it ends early with the record that crosses the answer budget. */
export function* browse(q: BrowseQuery): Verb<MessageRecord[]> {
  if (q.queues?.length === 0) return [];
  const rows = yield* ask((o) => o.records.browse(q));
  const budget = new AnswerBudget();
  const out: MessageRecord[] = [];
  for (const row of rows) {
    out.push(toRecord(row));
    if (!budget.add(row)) break;
  }
  return out;
}

export function* messageErrors(seq: number): Verb<AttemptError[]> {
  const rows = yield* ask((o) => o.records.errors(seq));
  return rows.map((r) => ({
    seqNumber: r.seq_number,
    attempt: r.attempt,
    error: r.error,
    failedAt: r.failed_at,
  }));
}

/** The sequence numbers among `seqs` that are settled or gone (what `awaitSettled` waits for). */
export function* settledOf(seqs: number[]): Verb<number[]> {
  const rows = yield* ask((o) => o.records.states(seqs));
  const states = new Map(rows.map((r) => [r.id, r.state]));
  return seqs.filter((s) => {
    const state = states.get(s);
    return state === undefined || SETTLED_STATES.includes(state);
  });
}

/**
 * A completion kept at least a receipt's lifetime wrote no receipt (its row answers a replay): a
 * row deleted before then leaves its receipt behind for the rest of that lifetime.
 */
const receiptsSince = (now: number) => now - RECEIPT_TTL_MS;

/** How far a `deleteSettled` goes in one write. */
export interface DeleteSteps {
  /** The most rows one statement deletes. */
  step: number;
  /** Stops, answering `more`, once it has deleted this many (absent: goes to the end). */
  most?: number;
  /**
   * Finds the kept mark reading this many rows' keys a statement (see `NewestKept`); absent: in
   * one statement, which reads every matching row.
   */
  markStep?: number;
  /** Stops, answering `more` before deleting anything, if the mark needs more keys than this. */
  markMost?: number;
}

/** What one write of a `deleteSettled` did. */
export interface DeletedSettled {
  deleted: number;
  /** It stopped at `DeleteSteps.most`: a further write goes on. */
  more: boolean;
}

/**
 * Deletes settled messages of a queue (kept outcomes, dead letters): state by state, in order of
 * sequence number, `steps.step` rows a statement. Each statement goes on from the last number the
 * one before took, so rows the query passes over (younger, of another subject, kept) are read
 * once, not once a step. Retention by count finds the newest row it keeps first, then deletes the
 * rows older than that one: the same rows each step, however many steps there are.
 */
export function* deleteSettled(
  s: WriteScope,
  queue: string,
  q: DeleteSettledQuery,
  steps: DeleteSteps,
): Verb<DeletedSettled> {
  const match: SettledMatch = { queue };
  if (q.olderThanMs > 0) match.settledBefore = s.now - q.olderThanMs;
  if (q.seqNumbers) match.seqNumbers = q.seqNumbers;
  if (q.subject !== undefined) match.subject = q.subject;
  // Found first, from every matching row: each step deletes below the same mark.
  let below: SettledMark | undefined;
  if (q.keepNewest !== undefined && q.keepNewest > 0) {
    const keep = q.keepNewest;
    if (steps.markStep === undefined) {
      below = yield* ask((o) => o.records.keptMark({ ...match, states: q.states, keep }));
    } else {
      const found = yield* keptMarkInSteps(match, q.states, keep, steps.markStep, steps.markMost);
      if (!found.complete) return { deleted: 0, more: true };
      below = found.mark;
    }
    // No more match than it keeps: nothing to delete.
    if (!below) return { deleted: 0, more: false };
  }
  const since = receiptsSince(s.now);
  const most = steps.most ?? Number.POSITIVE_INFINITY;
  let deleted = 0;
  for (const state of new Set(q.states)) {
    for (let after = 0; ; ) {
      if (deleted >= most) return { deleted, more: true };
      const limit = Math.min(steps.step, most - deleted);
      const done = yield* ask((o) =>
        o.records.deleteSettled({ ...match, state, below, after, limit, receiptsSince: since }),
      );
      deleted += done.deleted;
      if (done.through === undefined) break;
      after = done.through;
    }
  }
  return { deleted, more: false };
}

/**
 * The kept mark of retention by count, the rows' keys read `step` a statement; not `complete` when
 * it would read more than `most`.
 */
function* keptMarkInSteps(
  match: SettledMatch,
  states: MessageState[],
  keep: number,
  step: number,
  most = Number.POSITIVE_INFINITY,
): Verb<{ complete: boolean; mark?: SettledMark }> {
  const newest = new NewestKept(keep);
  let read = 0;
  for (const state of new Set(states)) {
    for (let after = 0; ; ) {
      if (read >= most) return { complete: false };
      const limit = Math.min(step, most - read);
      const keys = yield* ask((o) => o.records.settledKeys({ ...match, state, after, limit }));
      read += keys.length;
      for (const [settledAt, id] of keys) newest.offer(settledAt, id);
      if (keys.length < limit) break;
      after = keys[keys.length - 1]![1];
    }
  }
  const mark = newest.mark();
  return mark ? { complete: true, mark } : { complete: true };
}

/** Scheduled messages of the queue → active now. Returns how many. */
export function* promoteMessages(s: WriteScope, queue: string, seqs: number[]): Verb<number> {
  if (seqs.length === 0) return 0;
  const promoted = yield* ask((o) => o.records.promote({ queue, seqs, now: s.now }));
  if (promoted > 0) s.effects.activated(queue);
  return promoted;
}

/** Deletes messages of the queue that are not locked. Returns how many. */
export function* removeMessages(s: WriteScope, queue: string, seqs: number[]): Verb<number> {
  if (seqs.length === 0) return 0;
  const removed = yield* ask((o) => o.records.remove({ queue, seqs, receiptsSince: receiptsSince(s.now) }));
  s.effects.settled(removed);
  // A removed deferred or scheduled row may have held its group's line (or a strict queue's).
  if (removed.length > 0) s.effects.activated(queue);
  return removed.length;
}
