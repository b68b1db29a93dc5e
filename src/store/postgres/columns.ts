/** The columns a claim returns (read by `deliveredMessage`). */
export const DELIVERY_COLUMNS =
  "id, priority, locked_until, lock_token, delivery_count, enqueued_at, message_id, correlation_id, reply_to, group_id, content_type, subject, properties, body, max_deliveries, lock_duration_ms";

/** Every column `peek` shows (read by `peekedMessage`). */
export const PEEK_COLUMNS = `${DELIVERY_COLUMNS}, state, visible_at, expires_at, dead_letter_reason, dead_letter_description`;

/** A message's own delivery limit when it has one, else its queue's (`q.max_delivery_count` in scope). */
export const EFFECTIVE_MAX =
  "(CASE WHEN messages.max_deliveries > 0 THEN messages.max_deliveries ELSE q.max_delivery_count END)";
