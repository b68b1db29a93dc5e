import { InvalidArgumentError, NotFoundError } from "../../contract/errors.js";
import type { DebouncedSend, DebounceOptions } from "../../contract/job-service.js";
import { debounceDeadline } from "../metrics-input.js";
import type { PreparedMessage } from "../outgoing.js";
import { ask, type Verb, type WriteScope } from "../port.js";
import { send } from "./send.js";

/** The statements of debounce windows: a (queue, key) names the message its sends collapse into. */
export interface DebounceOps {
  /** Makes concurrent sends of one window wait for each other (a single-writer dialect: nothing). */
  lockWindow(queue: string, key: string): void;
  /** The open window's message (scheduled, never delivered) and when the window opened. */
  openWindow(queue: string, key: string): { seq: number; openedAt: number } | undefined;
  /** Moves the window's message to `at`, with a new body when given. */
  moveWindow(seq: number, at: number, body: Buffer | undefined): void;
  /** Opens (or reopens) the window of `key` on the message `seq`. */
  openedWindow(queue: string, key: string, seq: number, now: number): void;
}

/**
 * A debounced send: while the key's window is open its message moves later (up to the window's
 * longest wait) instead of a new one being sent; otherwise a message is scheduled at the window's
 * end and the window opens on it.
 */
export function* sendDebounced(
  s: WriteScope,
  queue: string,
  m: PreparedMessage,
  d: Required<DebounceOptions>,
): Verb<DebouncedSend> {
  const row = (yield* ask((o) => o.send.queueRows([queue]))).get(queue);
  if (row?.kind !== "queue") throw new NotFoundError(`mqlite: queue not found: ${queue}`);
  yield* ask((o) => o.send.lockWindow(queue, d.key));
  const w = yield* ask((o) => o.send.openWindow(queue, d.key));
  if (w) {
    const at = debounceDeadline(w.openedAt, s.now, d);
    yield* ask((o) => o.send.moveWindow(w.seq, at, d.replaceBody ? m.body : undefined));
    s.effects.scheduled(at);
    return { seqNumber: w.seq, created: false };
  }
  const sent = yield* send(s, queue, [m], { scheduledAt: s.now + d.windowMs, ttlMs: 0 });
  if (sent.stored === 0)
    throw new InvalidArgumentError("mqlite: a debounced send matched a live message (dedup)");
  const seq = sent.seqs[0]!;
  yield* ask((o) => o.send.openedWindow(queue, d.key, seq, s.now));
  return { seqNumber: seq, created: true };
}
