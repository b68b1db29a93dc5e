import { z } from "zod";
import { InvalidArgumentError } from "../contract/errors.js";
import type { FilterSample, Message, MessageState, OutgoingMessage } from "../contract/types.js";
import { decodeBase64, encodeBase64 } from "./base64.js";
import type { ItemBytes } from "./json-shape.js";
import { bytes, int, str } from "./primitives.js";
import { stringMap } from "./string-map.js";

/**
 * `wire.Message`: one shape for input and output, every key optional and omitted when zero. Send
 * stores only the metadata, properties, body and (our extension) priority; the rest is output.
 */
export const WireMessage = z
  .strictObject({
    seq_number: int(),
    enqueued_at_ms: int(),
    expires_at_ms: int(),
    visible_at_ms: int(),
    locked_until_ms: int(),
    delivery_count: int(),
    lock_token: str(),
    state: str(),
    dead_letter_reason: str(),
    dead_letter_description: str(),
    message_id: str(),
    correlation_id: str(),
    reply_to: str(),
    group_id: str(),
    content_type: str(),
    subject: str(),
    properties: stringMap({ nullable: true }).nullish(),
    body: bytes(),
    priority: int().meta({ description: "Extension: higher is claimed first. Default 0." }),
    max_delivery_count: int().meta({ description: "Extension: this message's own delivery limit." }),
    lock_duration_ms: int().meta({ description: "Extension: this message's own lease." }),
    unique_key: str().meta({ description: "Extension (send): no copy while a live message has this key." }),
    delay_ms: int().meta({
      description: "Extension (send): deliver no earlier than this long after the send.",
    }),
    queue: str().meta({ description: "Extension (output): the queue the message is in." }),
  })
  .meta({ id: "Message" });
export type WireMessage = z.input<typeof WireMessage>;

/** Sets `out[key]` only for a non-zero value (Go's `omitempty`). */
function put<T extends object, K extends keyof T>(out: T, key: K, value: T[K] | null | undefined): void {
  if (value !== undefined && value !== null && value !== "" && value !== 0) out[key] = value;
}

function propertiesFromWire(
  props: Record<string, string | null> | null | undefined,
): Record<string, string> | undefined {
  if (!props) return undefined;
  // fromEntries, not assignment: a "__proto__" property stays an ordinary key.
  const entries = Object.entries(props);
  return entries.length > 0 ? Object.fromEntries(entries.map(([k, v]) => [k, v ?? ""])) : undefined;
}

function bodyBytes(body: unknown): Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof Uint8Array) return body;
  throw new InvalidArgumentError("mqlite: body must be a string or bytes");
}

/** A stored message as Receive, ReceiveDeferred and Peek put it on the wire. */
export function messageToWire(m: Message): WireMessage {
  const out: WireMessage = {};
  put(out, "seq_number", m.seqNumber);
  put(out, "enqueued_at_ms", m.enqueuedAt);
  put(out, "expires_at_ms", m.expiresAt);
  put(out, "visible_at_ms", m.visibleAt);
  put(out, "locked_until_ms", m.lockedUntil);
  put(out, "delivery_count", m.deliveryCount);
  put(out, "lock_token", m.lockToken);
  put(out, "state", m.state);
  put(out, "dead_letter_reason", m.deadLetterReason);
  put(out, "dead_letter_description", m.deadLetterDescription);
  put(out, "message_id", m.messageId);
  put(out, "correlation_id", m.correlationId);
  put(out, "reply_to", m.replyTo);
  put(out, "group_id", m.groupId);
  put(out, "content_type", m.contentType);
  put(out, "subject", m.subject);
  if (m.properties && Object.keys(m.properties).length > 0) out.properties = m.properties;
  if (m.body && m.body.length > 0) out.body = encodeBase64(m.body);
  put(out, "priority", m.priority);
  put(out, "max_delivery_count", m.maxDeliveryCount);
  put(out, "lock_duration_ms", m.lockDurationMs);
  put(out, "queue", m.queue);
  return out;
}

/** A stored message read back from the wire (the client's side of `messageToWire`). */
export function messageFromWire(w: WireMessage): Message {
  const m: Message = {
    seqNumber: w.seq_number ?? 0,
    body: w.body ? decodeBase64(w.body) : Buffer.alloc(0),
    enqueuedAt: w.enqueued_at_ms ?? 0,
    deliveryCount: w.delivery_count ?? 0,
  };
  put(m, "messageId", w.message_id);
  put(m, "correlationId", w.correlation_id);
  put(m, "replyTo", w.reply_to);
  put(m, "groupId", w.group_id);
  put(m, "contentType", w.content_type);
  put(m, "subject", w.subject);
  const properties = propertiesFromWire(w.properties);
  if (properties) m.properties = properties;
  put(m, "priority", w.priority);
  put(m, "lockedUntil", w.locked_until_ms);
  put(m, "lockToken", w.lock_token);
  put(m, "state", w.state as MessageState | undefined);
  put(m, "visibleAt", w.visible_at_ms);
  put(m, "expiresAt", w.expires_at_ms);
  put(m, "deadLetterReason", w.dead_letter_reason);
  put(m, "deadLetterDescription", w.dead_letter_description);
  put(m, "maxDeliveryCount", w.max_delivery_count);
  put(m, "lockDurationMs", w.lock_duration_ms);
  put(m, "queue", w.queue);
  return m;
}

/** A message to send, as the client puts it on the wire. */
export function outgoingToWire(m: OutgoingMessage): WireMessage {
  if (m === null || typeof m !== "object")
    throw new InvalidArgumentError("mqlite: each message must be an object");
  const out: WireMessage = {};
  put(out, "message_id", m.messageId);
  put(out, "correlation_id", m.correlationId);
  put(out, "reply_to", m.replyTo);
  put(out, "group_id", m.groupId);
  put(out, "content_type", m.contentType);
  put(out, "subject", m.subject);
  if (m.properties && Object.keys(m.properties).length > 0) out.properties = m.properties;
  const body = bodyBytes(m.body);
  if (body && body.length > 0) out.body = encodeBase64(body);
  put(out, "priority", m.priority);
  put(out, "max_delivery_count", m.maxDeliveryCount);
  put(out, "lock_duration_ms", m.lockDurationMs);
  put(out, "unique_key", m.uniqueKey);
  put(out, "delay_ms", m.delayMs);
  return out;
}

/** A message to send, as the server reads it off the wire (output-only fields are ignored). */
export function outgoingFromWire(w: WireMessage, place?: ItemBytes): OutgoingMessage {
  const m: OutgoingMessage = { body: w.body ? decodeBase64(w.body, place) : Buffer.alloc(0) };
  put(m, "messageId", w.message_id);
  put(m, "correlationId", w.correlation_id);
  put(m, "replyTo", w.reply_to);
  put(m, "groupId", w.group_id);
  put(m, "contentType", w.content_type);
  put(m, "subject", w.subject);
  const properties = propertiesFromWire(w.properties);
  if (properties) m.properties = properties;
  put(m, "priority", w.priority);
  put(m, "maxDeliveryCount", w.max_delivery_count);
  put(m, "lockDurationMs", w.lock_duration_ms);
  put(m, "uniqueKey", w.unique_key);
  put(m, "delayMs", w.delay_ms);
  return m;
}

/** A TestFilter sample: a message plus the two times a filter may read. */
export function sampleFromWire(w: WireMessage): FilterSample {
  const sample: FilterSample = outgoingFromWire(w);
  put(sample, "enqueuedAt", w.enqueued_at_ms);
  put(sample, "visibleAt", w.visible_at_ms);
  return sample;
}

/** The client's side of `sampleFromWire`. */
export function sampleToWire(s: FilterSample): WireMessage {
  const out = outgoingToWire(s);
  put(out, "enqueued_at_ms", s.enqueuedAt);
  put(out, "visible_at_ms", s.visibleAt);
  return out;
}
