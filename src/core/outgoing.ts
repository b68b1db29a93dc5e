import { InvalidArgumentError, MessageTooLargeError } from "../contract/errors.js";
import { MAX_MESSAGE_PROPERTIES, MAX_PROPERTY_BYTES } from "../contract/limits.js";
import type { OutgoingMessage } from "../contract/types.js";
import { mapInSlices } from "./slices.js";
import { integer, isWellFormed, MAX_DURATION_MS } from "./validate.js";

/** A non-negative integer option of a message (absent → 0). */
function nonNegativeInt(value: unknown, field: string, max: number): number {
  const n = integer(value, field, 0, max);
  if (n < 0) throw new InvalidArgumentError(`mqlite: ${field} must not be negative`);
  return n;
}

/** A validated message ready to store: empty strings are NULL, properties are JSON or NULL. */
export interface PreparedMessage {
  body: Buffer;
  messageId: string | null;
  correlationId: string | null;
  replyTo: string | null;
  groupId: string | null;
  contentType: string | null;
  subject: string | null;
  /** The properties as given (for filters), and as stored. */
  properties: Record<string, string> | undefined;
  propertiesJson: string | null;
  priority: number;
  /** Whether the sender gave a priority (a task subscription's own applies otherwise). */
  prioritySet: boolean;
  /** Per-message overrides (0 = the queue's). */
  maxDeliveries: number;
  lockDurationMs: number;
  uniqueKey: string | null;
  delayMs: number;
}

function text(value: unknown, field: string): string | null {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string") throw new InvalidArgumentError(`mqlite: ${field} must be a string`);
  if (!isWellFormed(value))
    throw new InvalidArgumentError(`mqlite: ${field} is not valid Unicode (a lone surrogate)`);
  return value;
}

function bodyOf(value: unknown): Buffer {
  if (value === undefined || value === null) return Buffer.alloc(0);
  if (typeof value === "string") return Buffer.from(value, "utf8");
  if (value instanceof Uint8Array)
    return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  throw new InvalidArgumentError("mqlite: body must be a string or bytes");
}

function propertiesOf(value: unknown): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidArgumentError("mqlite: properties must be an object of strings");
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return undefined;
  if (entries.length > MAX_MESSAGE_PROPERTIES) {
    throw new InvalidArgumentError(
      `mqlite: ${entries.length} properties are over the limit of ${MAX_MESSAGE_PROPERTIES} per message`,
    );
  }
  let bytes = 0;
  for (const [k, v] of entries) {
    if (typeof v !== "string") throw new InvalidArgumentError(`mqlite: property "${k}" must be a string`);
    bytes += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (bytes > MAX_PROPERTY_BYTES) {
    throw new MessageTooLargeError(
      `mqlite: properties of ${bytes} bytes are over the ${MAX_PROPERTY_BYTES}-byte limit`,
    );
  }
  return value as Record<string, string>;
}

/** A message's body, checked to be an object's bytes within `maxBytes`. */
function checkedBody(m: OutgoingMessage, maxBytes: number): Buffer {
  if (m === null || typeof m !== "object")
    throw new InvalidArgumentError("mqlite: each message must be an object");
  const body = bodyOf(m.body);
  if (body.length > maxBytes) {
    throw new MessageTooLargeError(
      `mqlite: message body of ${body.length} bytes is over the ${maxBytes}-byte limit`,
    );
  }
  return body;
}

/** A message with its checked body, validated field by field. */
function prepared(m: OutgoingMessage, body: Buffer): PreparedMessage {
  const properties = propertiesOf(m.properties);
  return {
    body,
    messageId: text(m.messageId, "message_id"),
    correlationId: text(m.correlationId, "correlation_id"),
    replyTo: text(m.replyTo, "reply_to"),
    groupId: text(m.groupId, "group_id"),
    contentType: text(m.contentType, "content_type"),
    subject: text(m.subject, "subject"),
    properties,
    propertiesJson: properties ? JSON.stringify(properties) : null,
    priority: integer(m.priority, "priority", 0, 2 ** 31 - 1),
    prioritySet: m.priority !== undefined && m.priority !== null,
    maxDeliveries: nonNegativeInt(m.maxDeliveryCount, "max_delivery_count", 1_000_000_000),
    lockDurationMs: nonNegativeInt(m.lockDurationMs, "lock_duration_ms", MAX_DURATION_MS),
    uniqueKey: text(m.uniqueKey, "unique_key"),
    delayMs: nonNegativeInt(m.delayMs, "delay_ms", MAX_DURATION_MS),
  };
}

/**
 * Validates a send's messages. Every body is checked against `maxBytes` before anything else
 * (`MessageTooLargeError`), as the wire contract orders it.
 */
export function prepareMessages(
  input: OutgoingMessage | OutgoingMessage[],
  maxBytes: number,
): PreparedMessage[] {
  const list = Array.isArray(input) ? input : [input];
  const bodies = list.map((m) => checkedBody(m, maxBytes));
  return list.map((m, i) => prepared(m, bodies[i]!));
}

/**
 * `prepareMessages` for a long list, in slices with the event loop turning in between (see
 * `mapInSlices`): the same answer, or the same error.
 */
export async function prepareMessagesInSlices(
  list: readonly OutgoingMessage[],
  maxBytes: number,
): Promise<PreparedMessage[]> {
  const bodies = await mapInSlices(list, (m) => checkedBody(m, maxBytes));
  return mapInSlices(list, (m, i) => prepared(m, bodies[i]!));
}
