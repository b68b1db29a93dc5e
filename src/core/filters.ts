import { InvalidArgumentError } from "../contract/errors.js";
import type { Logger } from "../contract/logger.js";
import { messageOf } from "../contract/message-of.js";
import type { FilterSample, TestFilterResult } from "../contract/types.js";
import { compileMessageFilter, type FilterMessage, type MessageFilter } from "../filter/index.js";
import { type PreparedMessage, prepareMessages } from "./outgoing.js";

/** Broker limits on a filter's source and AST. */
export const FILTER_LIMITS = { maxSourceBytes: 4096, maxNodes: 1000 } as const;

/** A compiled subscription filter (what `compileFilter` gives a dialect to cache). */
export type { MessageFilter };

const neverMatches = (source: string): MessageFilter => ({
  source,
  matchesAll: false,
  readsBody: false,
  matches: () => false,
});

/**
 * Compiles a subscription filter with the broker's limits. At subscribe (`strict`) a bad filter is an
 * `InvalidArgumentError`; a stored filter that no longer compiles matches nothing (fail-closed) and
 * is logged.
 */
export function compileFilter(source: string, logger: Logger, strict = false): MessageFilter {
  try {
    return compileMessageFilter(source, FILTER_LIMITS);
  } catch (err) {
    const message = messageOf(err);
    if (strict) throw new InvalidArgumentError(`mqlite: invalid filter: ${message}`);
    logger.warn({ filter: source, err: message }, "stored filter does not compile; it matches nothing");
    return neverMatches(source);
  }
}

/** Refuses a filter that does not compile (at subscribe) with `InvalidArgumentError`. */
export function checkFilter(source: string): void {
  try {
    compileMessageFilter(source, FILTER_LIMITS);
  } catch (err) {
    throw new InvalidArgumentError(`mqlite: invalid filter: ${messageOf(err)}`);
  }
}

/** Compiles `source` and, given a sample, runs it against the sample as a publish would. */
export function testFilter(
  source: string,
  sample: FilterSample | undefined,
  now: number,
  maxBytes: number,
): TestFilterResult {
  let filter: MessageFilter;
  try {
    filter = compileMessageFilter(source ?? "", FILTER_LIMITS);
  } catch (err) {
    return {
      valid: false,
      error: messageOf(err),
      ran: false,
      matched: false,
    };
  }
  if (!sample) return { valid: true, ran: false, matched: false };
  const [m] = prepareMessages(sample, maxBytes);
  const enqueuedAt = sample.enqueuedAt || now;
  let error: string | undefined;
  const matched = filter.matches(filterMessage(m!, enqueuedAt, sample.visibleAt || enqueuedAt), (err) => {
    error = err.message;
  });
  return error === undefined
    ? { valid: true, ran: true, matched }
    : { valid: true, error, ran: true, matched: false };
}

/** What a filter sees of a message being published. */
export function filterMessage(m: PreparedMessage, enqueuedAt: number, visibleAt: number): FilterMessage {
  return {
    subject: m.subject ?? undefined,
    properties: m.properties,
    messageId: m.messageId ?? undefined,
    correlationId: m.correlationId ?? undefined,
    groupId: m.groupId ?? undefined,
    replyTo: m.replyTo ?? undefined,
    contentType: m.contentType ?? undefined,
    body: m.body,
    enqueuedAt,
    visibleAt,
  };
}
