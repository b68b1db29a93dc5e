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

/** The column list delivered messages carry (claims, receive-deferred), in `deliveryRow`'s order. */
export const DELIVERY_COLUMNS =
  "id, priority, locked_until, lock_token, delivery_count, enqueued_at, message_id, correlation_id, reply_to, group_id, content_type, subject, properties, body, max_deliveries, lock_duration_ms";

/**
 * A delivery row from the values of a statement in raw mode (`DELIVERY_COLUMNS` in order). The
 * driver builds a row object key by key, which costs a claim an eighth of its time; an array and
 * this literal (one shape for every row) cost a fraction of that.
 */
export function deliveryRow(v: readonly unknown[]): MessageRow {
  return {
    id: v[0] as number,
    priority: v[1] as number,
    locked_until: v[2] as number,
    lock_token: v[3] as string | null,
    delivery_count: v[4] as number,
    enqueued_at: v[5] as number,
    message_id: v[6] as string | null,
    correlation_id: v[7] as string | null,
    reply_to: v[8] as string | null,
    group_id: v[9] as string | null,
    content_type: v[10] as string | null,
    subject: v[11] as string | null,
    properties: v[12] as string | null,
    body: v[13] as Buffer,
    max_deliveries: v[14] as number,
    lock_duration_ms: v[15] as number,
  };
}

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
