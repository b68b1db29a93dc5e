import type { Message, MessageState } from "../contract/types.js";

/** The columns a claim or a peek reads. */
export interface MessageRow {
  id: number;
  queue?: string;
  state?: MessageState;
  priority: number;
  visible_at?: number;
  locked_until: number;
  lock_token: string | null;
  delivery_count: number;
  enqueued_at: number;
  expires_at?: number;
  message_id: string | null;
  correlation_id: string | null;
  reply_to: string | null;
  group_id: string | null;
  content_type: string | null;
  subject: string | null;
  properties: string | null;
  body: Buffer;
  dead_letter_reason?: string | null;
  dead_letter_description?: string | null;
  max_deliveries: number;
  lock_duration_ms: number;
}

/** The column list delivered messages carry (claims, receive-deferred). */
export const DELIVERY_COLUMNS =
  "id, priority, locked_until, lock_token, delivery_count, enqueued_at, message_id, correlation_id, reply_to, group_id, content_type, subject, properties, body, max_deliveries, lock_duration_ms";

/** Every column `peek` shows. */
export const PEEK_COLUMNS = `${DELIVERY_COLUMNS}, state, visible_at, expires_at, dead_letter_reason, dead_letter_description`;

function put<K extends keyof Message>(m: Message, key: K, value: Message[K] | null | undefined): void {
  if (value !== null && value !== undefined && value !== "" && value !== 0) m[key] = value;
}

/** A delivered message (with its lock, when it has one). */
export function deliveredMessage(row: MessageRow, withLock = true): Message {
  const m: Message = {
    seqNumber: row.id,
    body: row.body,
    enqueuedAt: row.enqueued_at,
    deliveryCount: row.delivery_count,
  };
  put(m, "messageId", row.message_id);
  put(m, "correlationId", row.correlation_id);
  put(m, "replyTo", row.reply_to);
  put(m, "groupId", row.group_id);
  put(m, "contentType", row.content_type);
  put(m, "subject", row.subject);
  if (row.properties) m.properties = JSON.parse(row.properties) as Record<string, string>;
  put(m, "priority", row.priority);
  put(m, "maxDeliveryCount", row.max_deliveries);
  put(m, "lockDurationMs", row.lock_duration_ms);
  put(m, "lockedUntil", row.locked_until);
  if (withLock) put(m, "lockToken", row.lock_token);
  return m;
}

/** A message as `peek` shows it: every field but the lock token. */
export function peekedMessage(row: MessageRow): Message {
  const m = deliveredMessage(row, false);
  m.state = row.state;
  put(m, "visibleAt", row.visible_at);
  put(m, "expiresAt", row.expires_at);
  put(m, "deadLetterReason", row.dead_letter_reason);
  put(m, "deadLetterDescription", row.dead_letter_description);
  return m;
}
