import type { ClaimOps } from "./verbs/claim.js";
import type { DependencyOps } from "./verbs/dependencies.js";
import type { FlowOps } from "./verbs/flows.js";
import type { MaintenanceOps } from "./verbs/maintenance.js";
import type { NamedLockOps } from "./verbs/named-locks.js";
import type { QueueOps } from "./verbs/queues.js";
import type { RecordOps } from "./verbs/records.js";
import type { SendOps } from "./verbs/send.js";
import type { SettleOps } from "./verbs/settle.js";
import type { TopicOps } from "./verbs/topics.js";
import type { WorkerOps } from "./verbs/workers.js";

/**
 * The port: what the core asks of storage. Each family of verbs declares the statements it needs
 * (`SettleOps`, …) with synchronous signatures; a dialect implements each one with its own SQL.
 * SQLite implements them as they are (better-sqlite3 is synchronous); PostgreSQL implements
 * `Async<…>` of them, bound to the connection of the transaction the verb runs in.
 */
export interface Ops {
  settle: SettleOps;
  claim: ClaimOps;
  send: SendOps;
  queues: QueueOps;
  topics: TopicOps;
  maintenance: MaintenanceOps;
  records: RecordOps;
  workers: WorkerOps;
  locks: NamedLockOps;
  flows: FlowOps;
  dependencies: DependencyOps;
}

/** The asynchronous form of a family of statements (how PostgreSQL implements it). */
export type Async<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : never;
};

/** One request to storage: a call on the dialect's `Ops`. */
export type Step = (ops: Ops) => unknown;

/**
 * A verb: the broker's rule for one operation, written once as a generator that yields the
 * statements it needs and returns the verb's answer. `yield* ask(…)` types the answer of a step.
 */
export type Verb<T> = Generator<Step, T, unknown>;

/** Asks storage for one statement's answer. */
export function* ask<R>(step: (ops: Ops) => R): Verb<R> {
  return (yield step) as R;
}

/**
 * Steps a verb synchronously (SQLite, inside a better-sqlite3 transaction): no await, so the
 * transaction never spans a turn of the event loop.
 */
export function runSync<T>(verb: Verb<T>, ops: Ops): T {
  let next = verb.next();
  while (!next.done) {
    let answer: unknown;
    try {
      answer = next.value(ops);
    } catch (err) {
      next = verb.throw(err);
      continue;
    }
    next = verb.next(answer);
  }
  return next.value;
}

/**
 * Steps a verb synchronously like `runSync`, but as a generator that yields after each statement:
 * its runner may let the event loop turn there, with the transaction still open (SQLite's long
 * writes, see `WriteOptions.long`).
 */
export function* stepsOf<T>(verb: Verb<T>, ops: Ops): Generator<void, T, undefined> {
  let next = verb.next();
  while (!next.done) {
    let answer: unknown;
    try {
      answer = next.value(ops);
    } catch (err) {
      next = verb.throw(err);
      yield;
      continue;
    }
    next = verb.next(answer);
    yield;
  }
  return next.value;
}

/** Steps a verb, awaiting each statement (PostgreSQL, inside one transaction on one connection). */
export async function runAsync<T>(verb: Verb<T>, ops: unknown): Promise<T> {
  let next = verb.next();
  while (!next.done) {
    let answer: unknown;
    try {
      answer = await next.value(ops as Ops);
    } catch (err) {
      next = verb.throw(err);
      continue;
    }
    next = verb.next(answer);
  }
  return next.value;
}

/**
 * What a write announces for after its commit. Each dialect decides how: SQLite hands messages to
 * parked receivers in the same transaction and wakes the rest after the commit; PostgreSQL wakes
 * its own node's waiters and tells the other nodes through NOTIFY.
 */
export interface Effects {
  /** `count` messages of `queue` (all, when absent) became claimable now. */
  activated(queue: string, count?: number): void;
  /** A message was parked until `at`: the scheduler must wake by then. */
  scheduled(at: number): void;
  /** These messages reached a final state (wake `awaitSettled`). */
  settled(seqs: readonly number[]): void;
  /** `n` messages of `queue` were completed (the completion counters). */
  completed(queue: string, n: number): void;
  /**
   * A claim leased messages until `at` (the earliest of them): the reaper must wake by then. May
   * act before the commit (a reaper woken for a claim that rolled back finds nothing to do).
   */
  leased(at: number): void;
  /** A send stored `n` messages into `queue` (the sent counters). */
  sent(queue: string, n: number): void;
  /** A subscription's filter failed at run time: the message was not routed to it (logged). */
  filterFailed(f: { topic: string; subscription: string; err: string }): void;
}

/** What a write verb sees: the transaction's time and where its announcements go. */
export interface WriteScope {
  now: number;
  effects: Effects;
}

/** How a write runs. */
export interface WriteOptions {
  /**
   * The verb changes state with at most one statement (any others only read): PostgreSQL may run
   * it without BEGIN/COMMIT, in one round trip.
   */
  oneStatement?: boolean;
  /**
   * The verb may run long (a batch of `LONG_WRITE_ITEMS` or more, its statements cut into steps of
   * at most `STEP_ITEMS` items; a settlement or claim batch of more than one step where
   * `Dialect.stepsHoldTheLoop`): a dialect whose transactions hold the event loop (SQLite) runs it
   * alone and lets the loop turn between its statements, so that one maximal request does not hold
   * every other request of a server (its /healthz included) for the whole transaction.
   */
  long?: boolean;
  signal?: AbortSignal;
}

/** Items of a batch from which its write is `long`. */
export const LONG_WRITE_ITEMS = 1000;

/** The most items a long write's verb hands storage in one statement (a step between two turns). */
export const STEP_ITEMS = 512;

/**
 * The most settlements a step hands storage where statements hold the event loop
 * (`Dialect.stepsHoldTheLoop`). Fewer than `STEP_ITEMS`: SQLite settles a message with statements
 * of its own (its fence, its outcome, its receipt), about 45 µs each on a slow two-core machine,
 * so a step of 512 held the event loop for 20-30 ms; one of 128 holds it for 5-8. PostgreSQL
 * settles a step in one statement, so it keeps steps of `STEP_ITEMS` (20 round trips for 10,000
 * items rather than 79).
 */
export const SETTLE_STEP_ITEMS = 128;

/**
 * The most messages a receive (receiveAny, receiveDeferred) claims in one step where statements
 * hold the event loop (`Dialect.stepsHoldTheLoop`); a receive of more is a long write. SQLite
 * claims a message with a statement of its own (an update of its row, body included), 20-40 µs
 * each for 2.4 KiB bodies on a slow two-core machine: a receive of 256 held the event loop for
 * 5-10 ms in its claims alone.
 */
export const CLAIM_STEP_ITEMS = 64;

/**
 * The most rows one statement of `deleteSettled` deletes where statements run elsewhere
 * (PostgreSQL, `Dialect.stepsHoldTheLoop` false): the statement hands its deleted rows on to the
 * part that writes their receipts, and a step bounds what it holds (a purge of a million rows is
 * a hundred statements of one transaction). Where statements hold the event loop, `STEP_ITEMS`.
 */
export const DELETE_STEP_ROWS = 10_000;

/**
 * The rows whose keys (settlement time, number) one statement reads where statements hold the
 * event loop, to find the mark retention by count deletes below (`NewestKept`): a row read by its
 * number costs 1.5-3 µs here, so a mark over 50,000 rows read in one statement held the loop for
 * 80 ms; 2,048 a step hold it for 3-6.
 */
export const MARK_STEP_ROWS = 2048;

/** How a read verb may run. */
export interface ReadOptions {
  /**
   * Its statements may be spread over several turns of the event loop, with other work (writes
   * included) run between them; each statement sees what was committed when it ran. A dialect
   * whose reads hold the event loop (SQLite) lets it turn between statements once a read has run
   * for a while, so that one large read (a 32 MiB peek) does not hold every other request.
   */
  sliced?: boolean;
}

/** What a dialect gives the core: transactions to run verbs in. */
export interface Dialect {
  /**
   * Its statements run on the event loop (SQLite): a batch that would hold the loop for long is
   * cut into small steps there (`SETTLE_STEP_ITEMS`, `CLAIM_STEP_ITEMS`) and run as a long write,
   * the loop turning between steps. Where statements run elsewhere (PostgreSQL), small steps would
   * only cost round trips, and a batch goes in `STEP_ITEMS` (a settlement batch) or whole (a claim).
   */
  readonly stepsHoldTheLoop: boolean;
  /** Runs a write verb in a transaction; its effects happen after the commit. */
  write<T>(verb: (scope: WriteScope) => Verb<T>, options?: WriteOptions): Promise<T>;
  /** Runs a read-only verb. */
  read<T>(verb: (now: number) => Verb<T>, options?: ReadOptions): Promise<T>;
}
