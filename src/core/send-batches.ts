import type { PreparedMessage } from "./outgoing.js";
import type { QueueRow } from "./queue-config.js";
import type { SendAt } from "./verbs/send.js";

/** Messages a batch takes at most: below a long write's size (see `LONG_WRITE_ITEMS`). */
export const MAX_BATCHED_MESSAGES = 512;

/** A plain send's messages, and those of the sends that joined it, written together. */
export interface SendBatch {
  readonly queue: QueueRow;
  readonly at: SendAt;
  /** Every joined send's messages, in the order the sends were made. */
  readonly messages: PreparedMessage[];
  /** The ids of `messages` once stored (left undefined when the queue's row was stale: nothing stored). */
  ids?: number[];
  /** Settles once the batch's write has. */
  written?: Promise<void>;
}

/**
 * Joins concurrent plain sends to one queue (see `plainSend`): a send made while the previous one
 * waits for its write, with nothing else written in between, adds its messages to that write
 * instead of queueing a write of its own. Its rows go in with the others' (SQLite inserts 64 rows
 * a statement, PostgreSQL all in one), counted once: sixteen producers' sends are one statement,
 * not sixteen.
 *
 * Order is kept: only the latest write may take more (any other write queued meanwhile closes the
 * batch, see `close`), and a batch's messages are stored in the order they joined. A batch closes
 * when its write begins, so a write that runs again (a retry) stores the same messages.
 */
export class SendBatches {
  private open: SendBatch | undefined;

  /**
   * Adds `messages` to the open batch if they may go with it (same queue row, same delivery time
   * and TTL, room left): their ids once stored. Undefined when they may not (start a batch).
   */
  join(
    queue: QueueRow,
    messages: readonly PreparedMessage[],
    at: SendAt,
  ): Promise<number[] | undefined> | undefined {
    const b = this.open;
    if (
      !b?.written ||
      b.queue !== queue ||
      b.at.scheduledAt !== at.scheduledAt ||
      b.at.ttlMs !== at.ttlMs ||
      b.messages.length + messages.length > MAX_BATCHED_MESSAGES
    )
      return undefined;
    const from = b.messages.length;
    for (const m of messages) b.messages.push(m);
    const to = b.messages.length;
    return b.written.then(() => b.ids?.slice(from, to));
  }

  /**
   * Opens a batch with a send's messages; `write` queues its write (which calls `begin` when it
   * starts and once it is over, and sets `ids`). The send's own ids once stored.
   */
  start(
    queue: QueueRow,
    messages: readonly PreparedMessage[],
    at: SendAt,
    write: (b: SendBatch) => Promise<void>,
  ): Promise<number[] | undefined> {
    // A copy: the sends that join add to it.
    const b: SendBatch = { queue, at, messages: messages.slice() };
    this.open = b;
    b.written = write(b);
    // Answered as the sends that join are, in the same turn of the microtasks: the first to send
    // again would otherwise be alone in the next write, its commit made before the others sent.
    return b.written.then(() =>
      b.ids && b.ids.length > messages.length ? b.ids.slice(0, messages.length) : b.ids,
    );
  }

  /** The batch's write has begun (or ended without running): nothing joins it any more. */
  begin(b: SendBatch): void {
    if (this.open === b) this.open = undefined;
  }

  /** Another write is queued: a later send must not be stored before it. */
  close(): void {
    this.open = undefined;
  }
}
