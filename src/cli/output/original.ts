import type { Message } from "../../contract/types.js";
import { goEscape, goJson, goQuote } from "./go.js";

/**
 * The original CLI's output shapes (the default `--output text` and `--output json`), which
 * scripts parse. Our own richer forms are `--output human` and `--output wire`.
 */

type Pair = [key: string, value: string | number];

/** A mutating command's answer: `ok: k=v k=v` in text, the same pairs as a JSON object with sorted keys. */
export function okResult(pairs: Pair[]): { text: string; json: Record<string, string | number> } {
  const text = `ok:${pairs.map(([k, v]) => ` ${k}=${v}`).join("")}`;
  const sorted = [...pairs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { text, json: Object.fromEntries(sorted) };
}

/** Which optional fields a message carries in JSON: received messages and peeked ones differ. */
export type MessageView = "received" | "received-with-token" | "peeked";

function sortedProperties(p: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!p || Object.keys(p).length === 0) return undefined;
  return Object.fromEntries(Object.entries(p).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * A message as the original's `wire.Message`: its key order, every zero value omitted, the body in
 * base64. Received messages carry no state, visibility, expiry or dead-letter fields.
 */
export function originalMessage(m: Message, view: MessageView): Record<string, unknown> {
  const peeked = view === "peeked";
  const fields: [string, unknown][] = [
    ["seq_number", m.seqNumber],
    ["enqueued_at_ms", m.enqueuedAt],
    ["expires_at_ms", peeked ? m.expiresAt : undefined],
    ["visible_at_ms", peeked ? m.visibleAt : undefined],
    ["locked_until_ms", m.lockedUntil],
    ["delivery_count", m.deliveryCount],
    ["lock_token", view === "received-with-token" ? m.lockToken : undefined],
    ["state", peeked ? m.state : undefined],
    ["dead_letter_reason", peeked ? m.deadLetterReason : undefined],
    ["dead_letter_description", peeked ? m.deadLetterDescription : undefined],
    ["message_id", m.messageId],
    ["correlation_id", m.correlationId],
    ["reply_to", m.replyTo],
    ["group_id", m.groupId],
    ["content_type", m.contentType],
    ["subject", m.subject],
    ["properties", sortedProperties(m.properties)],
    ["body", m.body.length > 0 ? Buffer.from(m.body).toString("base64") : undefined],
  ];
  return Object.fromEntries(fields.filter(([, v]) => v !== undefined && v !== 0 && v !== ""));
}

/** `receive`'s JSON: like a 2-space-indented array, except that an empty batch prints `[` and `]` on two lines. */
export function receivedJson(messages: Message[], view: MessageView): string {
  const items = messages.map((m) => `  ${goEscape(JSON.stringify(originalMessage(m, view), null, 2))}`);
  return `[\n${items.map((s) => s.replace(/\n/g, "\n  ")).join(",\n")}${items.length ? "\n" : ""}]\n`;
}

/** `peek`'s JSON: a bare array (`[]` when empty). */
export function peekedJson(messages: Message[]): string {
  return goJson(messages.map((m) => originalMessage(m, "peeked")));
}

/** One received message as a text line; the lock token only when the caller keeps the lock. */
export function receivedLine(m: Message, withToken: boolean): string {
  let line = `seq=${m.seqNumber} deliveries=${m.deliveryCount}`;
  if (m.messageId) line += ` message-id=${m.messageId}`;
  if (m.groupId) line += ` group=${m.groupId}`;
  if (m.replyTo) line += ` reply-to=${m.replyTo}`;
  if (withToken && m.lockToken) line += ` lock-token=${m.lockToken}`;
  return `${line} body=${goQuote(m.body)}`;
}

/** `receive`'s text: one line per message, or `(no messages)`. */
export function receivedText(messages: Message[], withToken: boolean): string {
  if (messages.length === 0) return "(no messages)\n";
  return messages.map((m) => `${receivedLine(m, withToken)}\n`).join("");
}

/** `peek`'s text: `seq= state= deliveries= body=` per message, or `(empty)`. */
export function peekedText(messages: Message[]): string {
  if (messages.length === 0) return "(empty)\n";
  return messages
    .map(
      (m) =>
        `seq=${m.seqNumber} state=${m.state ?? ""} deliveries=${m.deliveryCount} body=${goQuote(m.body)}\n`,
    )
    .join("");
}
