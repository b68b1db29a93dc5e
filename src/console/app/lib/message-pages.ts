import type { StateKey } from "../components/counts.js";
import type { Msg } from "../components/message.js";
import { api } from "./session.js";

/** The states Peek reads, oldest first by sequence number; the others (kept settled ones) come from Browse. */
export const PEEKABLE: ReadonlySet<StateKey> = new Set([
  "active",
  "locked",
  "deferred",
  "scheduled",
  "dead_lettered",
]);

/** The most messages one list keeps loaded (Peek's and Browse's own cap per call). */
export const MAX_LOADED = 1000;

/**
 * Where a page of a queue's messages in a state begins: `undefined` for the first page, else the
 * cursor the previous page returned. A cursor is a position, not an offset, so messages arriving or
 * leaving meanwhile neither repeat nor skip the ones after it.
 */
export type Cursor = number | undefined;

export interface MessagePage {
  messages: Msg[];
  /** The cursor of the next page; undefined when this page was the last. */
  next: Cursor;
}

/**
 * One page: Peek from the sequence number after the cursor (waiting states and dead letters), or
 * Browse by settle time before the cursor (completed and cancelled, newest first).
 */
export async function readPage(
  queue: string,
  state: StateKey,
  cursor: Cursor,
  size: number,
): Promise<MessagePage> {
  const max = Math.min(size, MAX_LOADED);
  if (PEEKABLE.has(state)) {
    const r = await api().call("peek", { queue, state, from_seq: (cursor ?? 0) + 1, max });
    const last = r.messages.at(-1)?.seq_number;
    return { messages: r.messages, next: r.messages.length === max && last ? last : undefined };
  }
  const r = await api().call("browse", {
    queues: [queue],
    states: [state],
    order: "settled",
    limit: max,
    ...(cursor !== undefined && { settled_before_ms: cursor }),
  });
  // Settle times can tie: the next page starts at the last one's instant and drops what it repeats.
  const last = r.messages.at(-1)?.settled_at_ms;
  return { messages: r.messages, next: r.messages.length === max && last ? last + 1 : undefined };
}

/** Appends a page to a list, leaving out the messages it already holds. */
export function appendPage(list: Msg[], page: Msg[]): Msg[] {
  const seen = new Set(list.map((m) => m.seq_number));
  return [...list, ...page.filter((m) => !seen.has(m.seq_number))];
}
