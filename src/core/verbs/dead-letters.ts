import { NotFoundError } from "../../contract/errors.js";
import { type DlqBounds, effectiveBound } from "../dlq-bounds.js";
import { ask, type Verb, type WriteScope } from "../port.js";

/** How many dead letters one retention statement deletes; a pass runs at most `MAX_BATCHES` per bound. */
export const RETENTION_BATCH = 1000;
const RETENTION_MAX_BATCHES = 100;

/** A dead letter a redrive would move (its group decides the ordering locks a target needs). */
export interface DeadLetter {
  id: number;
  groupId: string | null;
}

/** A queue holding dead letters, with its own retention bounds (0 inherits, <0 unbounded). */
export interface DeadLetterQueue {
  name: string;
  maxAgeMs: number;
  maxCount: number;
  maxBytes: number;
}

/** The statements that read or remove dead letters (redrive, purge, retention). */
export interface DeadLetterOps {
  /** The queue's ordering mode, or `undefined` when it does not exist. */
  queueOrdering(a: { name: string }): string | undefined;
  /**
   * The queue's dead letters enqueued before `cutoff` (0: any), oldest first: at most `limit`
   * (0: all), or, with `only`, all of those among `only`.
   */
  deadLetters(a: { queue: string; cutoff: number; limit: number; only?: number[] }): DeadLetter[];
  /**
   * Moves one dead letter back to active in place: same seq, delivery count reset, a TTL that
   * already lapsed cleared (or it would expire again at once), its unique key given up when a live
   * message holds it by now. False when it is no longer dead-lettered.
   */
  redriveInPlace(a: { id: number; now: number }): boolean;
  /**
   * Moves the dead letters into `target` (fresh seqs in their order, enqueued now, no TTL) under
   * the target's ordering; how many moved.
   */
  redriveTo(a: { letters: DeadLetter[]; target: string; ordering: string; now: number }): number;
  /** Deletes the queue's dead letters enqueued before `cutoff` (0: any): the oldest `max` (0: all). */
  purgeDeadLetters(a: { queue: string; cutoff: number; max: number }): number;
  /** Every queue that holds dead letters. */
  deadLetterQueues(): DeadLetterQueue[];
  /** Deletes up to `RETENTION_BATCH` of the queue's oldest dead letters enqueued before `before`. */
  dropDeadLettersBefore(a: { queue: string; before: number }): number;
  /** The seq of the queue's `offset`-th newest dead letter (0 the newest), if there are that many. */
  nthNewestDeadLetter(a: { queue: string; offset: number }): number | undefined;
  /** The newest dead letter at which the bodies, summed from the newest, exceed `bytes`. */
  deadLetterBytesEdge(a: { queue: string; bytes: number }): number | undefined;
  /** Deletes up to `RETENTION_BATCH` of the queue's oldest dead letters with seq ≤ `id`. */
  dropDeadLettersUpTo(a: { queue: string; id: number }): number;
}

function* requireQueue(name: string): Verb<string> {
  const ordering = yield* ask((o) => o.maintenance.queueOrdering({ name }));
  if (ordering === undefined) throw new NotFoundError("mqlite: queue not found");
  return ordering;
}

export interface RedriveInput {
  /** At most this many (0: all). */
  max: number;
  /** Only those enqueued more than this long ago (0: any). */
  olderThanMs: number;
  /** Only these seqs, when given. */
  only?: number[];
  /** Into this queue (a fresh copy); in place when absent. */
  target?: string;
}

/** Moves dead letters of `queue` back to active (one chunk of a rate-limited redrive). */
export function* redrive(s: WriteScope, queue: string, input: RedriveInput): Verb<number> {
  yield* requireQueue(queue);
  const target = input.target;
  const ordering = target === undefined ? undefined : yield* requireQueue(target);
  const cutoff = input.olderThanMs > 0 ? s.now - input.olderThanMs : 0;
  const { max, only } = input;
  let letters = yield* ask((o) => o.maintenance.deadLetters({ queue, cutoff, limit: only ? 0 : max, only }));
  if (only && max > 0) letters = letters.slice(0, max);
  let moved = 0;
  if (target === undefined || ordering === undefined) {
    // One at a time: a redriven message gives up its unique key if a live one (maybe redriven just
    // before) holds it.
    for (const { id } of letters) {
      if (yield* ask((o) => o.maintenance.redriveInPlace({ id, now: s.now }))) moved++;
    }
  } else if (letters.length > 0) {
    moved = yield* ask((o) => o.maintenance.redriveTo({ letters, target, ordering, now: s.now }));
  }
  if (moved > 0) s.effects.activated(target ?? queue);
  return moved;
}

/** Deletes dead letters of `queue`: the oldest `max` (0: all) enqueued more than `olderThanMs` ago. */
export function* purge(s: WriteScope, queue: string, max: number, olderThanMs: number): Verb<number> {
  yield* requireQueue(queue);
  const cutoff = olderThanMs > 0 ? s.now - olderThanMs : 0;
  return yield* ask((o) => o.maintenance.purgeDeadLetters({ queue, cutoff, max }));
}

/**
 * One retention pass over every queue with dead letters: each bound (age, count, bytes; the
 * queue's own, else the broker's) drops the oldest beyond it, in batches. How many were dropped.
 */
export function* enforceRetention(defaults: DlqBounds, now: number): Verb<number> {
  let dropped = 0;
  for (const q of yield* ask((o) => o.maintenance.deadLetterQueues())) {
    const queue = q.name;
    const age = effectiveBound(q.maxAgeMs, defaults.maxAgeMs);
    const count = effectiveBound(q.maxCount, defaults.maxCount);
    const bytes = effectiveBound(q.maxBytes, defaults.maxBytes);
    if (age > 0) {
      const before = now - age;
      dropped += yield* batched(() => ask((o) => o.maintenance.dropDeadLettersBefore({ queue, before })));
    }
    if (count > 0) {
      const edge = yield* ask((o) => o.maintenance.nthNewestDeadLetter({ queue, offset: count }));
      if (edge !== undefined) {
        dropped += yield* batched(() => ask((o) => o.maintenance.dropDeadLettersUpTo({ queue, id: edge })));
      }
    }
    if (bytes > 0) {
      const edge = yield* ask((o) => o.maintenance.deadLetterBytesEdge({ queue, bytes }));
      if (edge !== undefined) {
        dropped += yield* batched(() => ask((o) => o.maintenance.dropDeadLettersUpTo({ queue, id: edge })));
      }
    }
  }
  return dropped;
}

/** Repeats a batch delete until a batch comes back short (or the pass's cap). */
function* batched(step: () => Verb<number>): Verb<number> {
  let total = 0;
  for (let i = 0; i < RETENTION_MAX_BATCHES; i++) {
    const n = yield* step();
    total += n;
    if (n < RETENTION_BATCH) break;
  }
  return total;
}
