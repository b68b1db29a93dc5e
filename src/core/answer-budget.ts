import { askedAnswerBytes, MAX_ANSWER_BYTES } from "../contract/limits.js";
import type { MaxBytes } from "../contract/types.js";

/**
 * The byte budget of one answer that lists messages: reads stop after the message that crosses it
 * (as Receive and Peek do), so an answer always fits in memory and in one JSON string. Without it a
 * ReadTopic, LeaseTopic, Browse or GetMessages over large messages built a string past V8's limit:
 * seconds of work, then a 500 ("Invalid string length").
 */
export const ANSWER_BUDGET_BYTES = MAX_ANSWER_BYTES;

/** The bytes an answer may take: `maxBytes` (asked now when it is a function) within `ANSWER_BUDGET_BYTES`. */
export function answerBytes(maxBytes: MaxBytes | undefined): number {
  return askedAnswerBytes(typeof maxBytes === "function" ? maxBytes() : maxBytes);
}

/** The bytes a stored message takes in an answer: its body, properties and result. */
export function rowBytes(row: {
  body?: Uint8Array | null;
  properties?: string | null;
  result?: Uint8Array | null;
}): number {
  return (row.body?.length ?? 0) + (row.properties?.length ?? 0) + (row.result?.length ?? 0);
}

/** Tracks an answer's bytes: `add` returns false once the budget is spent (the row that crossed it is in). */
export class AnswerBudget {
  private bytes = 0;
  constructor(private readonly limit: number = ANSWER_BUDGET_BYTES) {}
  add(row: Parameters<typeof rowBytes>[0]): boolean {
    this.bytes += rowBytes(row);
    return this.bytes < this.limit;
  }
  get spent(): number {
    return this.bytes;
  }
}
