import { InvalidArgumentError, NameConflictError, NotFoundError } from "../../contract/errors.js";
import type { QueueConfig, QueueInfo, QueueStats } from "../../contract/types.js";
import { ask, STEP_ITEMS, type Verb, type WriteScope } from "../port.js";
import { type QueueRow, queueInfoFromRow } from "../queue-config.js";
import { type CountRow, statsFromCounts } from "../queue-counts.js";
import type { SubscriptionOps } from "./subscriptions.js";

/** A queue's config with its defaults applied (`normalizeQueueConfig`). */
export type NormalizedQueueConfig = Required<QueueConfig>;

/**
 * The statements of queues and subscriptions (the subscription ones are declared with their verbs
 * in `subscriptions.ts`). Names go in as given: a dialect maps any it cannot store.
 */
export interface QueueOps extends SubscriptionOps {
  /**
   * Serialises this transaction's namespace checks and changes with every other one's (queues,
   * subscriptions and topics share one namespace). A no-op where writes are serial anyway.
   */
  lockNamespace(): void;
  /** The queue's row, or undefined. */
  queue(name: string): QueueRow | undefined;
  /** Whether `name` is a live topic: it has subscriptions or is declared. */
  isTopic(name: string): boolean;
  /** Creates the queue, or replaces the whole config of an existing one (its kind and pause state stay). */
  saveQueue(a: { name: string; config: NormalizedQueueConfig; now: number }): void;
  /** Deletes up to `limit` of the queue's messages, whatever their state; how many it deleted. */
  deleteMessages(a: { queue: string; limit: number }): number;
  /** Deletes the queue with its messages and what is kept of them: dedup keys, receipts, receive attempts. */
  dropQueue(name: string): void;
  /** Every queue, by name. */
  queues(): QueueRow[];
  /** The queue's kept counts by state, and the enqueue time of its oldest active or locked message. */
  counts(queue: string): { rows: CountRow[]; oldest: number | null };
  /** Sets the queue's pause flag; false when it does not exist. */
  setQueuePaused(a: { name: string; paused: boolean; now: number }): boolean;
}

const QUEUE_NOT_FOUND = "mqlite: queue not found";

/** The queue's row, or `NotFoundError`. */
export function* requireQueue(name: string): Verb<QueueRow> {
  const row = yield* ask((o) => o.queues.queue(name));
  if (!row) throw new NotFoundError(QUEUE_NOT_FOUND);
  return row;
}

/**
 * Saves a queue's config, refusing a live topic's name and a change of kind (a plain queue never
 * becomes a subscription's backing queue, nor the other way round).
 */
export function* saveQueue(
  s: WriteScope,
  name: string,
  config: NormalizedQueueConfig,
  existing: QueueRow | undefined,
): Verb<void> {
  if (yield* ask((o) => o.queues.isTopic(name))) throw new NameConflictError(`mqlite: "${name}" is a topic`);
  if (existing && existing.kind !== config.kind) {
    throw new NameConflictError(
      `mqlite: "${name}" exists as a ${existing.kind === "queue" ? "queue" : "subscription"}`,
    );
  }
  yield* ask((o) => o.queues.saveQueue({ name, config, now: s.now }));
}

export function* createQueue(s: WriteScope, name: string, config: NormalizedQueueConfig): Verb<void> {
  yield* ask((o) => o.queues.lockNamespace());
  const existing = yield* ask((o) => o.queues.queue(name));
  if (config.kind === "subscription" && !existing && !(yield* ask((o) => o.queues.isTopic(name)))) {
    // A backing queue without its subscription could never be deleted or unsubscribed.
    throw new InvalidArgumentError("mqlite: a subscription's backing queue is created by subscribe");
  }
  yield* saveQueue(s, name, config, existing);
}

export function* deleteQueue(name: string): Verb<void> {
  yield* ask((o) => o.queues.lockNamespace());
  const q = yield* requireQueue(name);
  if (q.kind === "subscription") {
    throw new NameConflictError(`mqlite: "${name}" is a subscription's backing queue; unsubscribe instead`);
  }
  yield* dropQueueInSteps(name);
}

/**
 * Drops a queue: its messages first, `STEP_ITEMS` a statement, so that a long write (on SQLite)
 * lets the event loop turn between them (deleting 80,000 messages in one statement held a server
 * for 400 ms), then its row with what is kept of them.
 */
export function* dropQueueInSteps(name: string): Verb<void> {
  for (;;) {
    const n = yield* ask((o) => o.queues.deleteMessages({ queue: name, limit: STEP_ITEMS }));
    if (n < STEP_ITEMS) break;
  }
  yield* ask((o) => o.queues.dropQueue(name));
}

export function* listQueues(): Verb<QueueInfo[]> {
  return (yield* ask((o) => o.queues.queues())).map(queueInfoFromRow);
}

export function* stats(now: number, queue: string): Verb<QueueStats> {
  yield* requireQueue(queue);
  const { rows, oldest } = yield* ask((o) => o.queues.counts(queue));
  return statsFromCounts(queue, rows, oldest, now);
}

/** Pauses (nothing is claimed) or resumes a queue; resuming wakes its waiting receivers. */
export function* setQueuePaused(s: WriteScope, name: string, paused: boolean): Verb<void> {
  if (!(yield* ask((o) => o.queues.setQueuePaused({ name, paused, now: s.now })))) {
    throw new NotFoundError(QUEUE_NOT_FOUND);
  }
  if (!paused) s.effects.activated(name);
}
