import { InvalidArgumentError } from "../contract/errors.js";
import type { BrowseOptions, DeleteSettledOptions } from "../contract/job-service.js";
import { MESSAGE_STATES, type MessageState, SETTLED_STATES } from "../contract/types.js";
import { duration, integer, keepNewest, seqNumberList } from "./validate.js";
import type { BrowseQuery, DeleteSettledQuery } from "./verbs/records.js";

/** The most records one `browse` returns. */
const MAX_BROWSE = 1000;

/** The states asked for (all `allowed` when none), each one of `allowed`. */
function stateList(states: MessageState[] | undefined, allowed: readonly MessageState[]): MessageState[] {
  if (states !== undefined && states !== null && !Array.isArray(states)) {
    throw new InvalidArgumentError("mqlite: states must be a list");
  }
  const list = states && states.length > 0 ? states : [...allowed];
  for (const s of list) {
    if (!allowed.includes(s)) throw new InvalidArgumentError(`mqlite: unknown or unsupported state "${s}"`);
  }
  return list;
}

/** `browse`'s options, validated: unknown states are refused, the page is clamped. */
export function browseQuery(options: BrowseOptions): BrowseQuery {
  const q: BrowseQuery = {
    order: options.order === "settled" ? "settled" : "newest",
    limit: Math.min(Math.max(1, Math.trunc(options.limit ?? 100) || 100), MAX_BROWSE),
    offset: Math.max(0, Math.trunc(options.offset ?? 0) || 0),
  };
  if (options.queues) q.queues = options.queues;
  if (options.states) q.states = stateList(options.states, MESSAGE_STATES);
  if (options.backingOff !== undefined) q.backingOff = options.backingOff;
  if (options.subject !== undefined) q.subject = options.subject;
  if (options.settledBefore !== undefined) q.settledBefore = options.settledBefore;
  return q;
}

/**
 * `deleteSettled`'s options, validated: settled states only (all of them when none), an integer
 * age (a negative one counts as 0), at most `MAX_SEQ_NUMBERS_PER_CALL` sequence numbers, a string
 * subject. A deletion is not undone: what it cannot read exactly is refused, never guessed at.
 */
export function deleteSettledQuery(options: DeleteSettledOptions): DeleteSettledQuery {
  const q: DeleteSettledQuery = {
    states: stateList(options.states, SETTLED_STATES),
    olderThanMs: Math.max(0, duration(options.olderThanMs, "older_than_ms")),
  };
  if (options.seqNumbers !== undefined && options.seqNumbers !== null) {
    q.seqNumbers = seqNumberList(options.seqNumbers);
  }
  if (options.subject !== undefined && options.subject !== null) {
    if (typeof options.subject !== "string")
      throw new InvalidArgumentError("mqlite: subject must be a string");
    q.subject = options.subject;
  }
  const keep = keepNewest(options.keepNewest);
  if (keep !== undefined) q.keepNewest = keep;
  return q;
}

/** A job's progress: an integer percentage. */
export function progressValue(value: unknown): number {
  const p = integer(value, "progress");
  if (p < 0 || p > 100) throw new InvalidArgumentError("mqlite: progress must be within 0..100");
  return p;
}
