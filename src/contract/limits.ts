/**
 * Limits every implementation applies to what a message carries besides its body (whose limit is
 * the broker's `maxMessageBytes`). Without them one message with a million properties, or a
 * property of 30 MB, froze a served broker for seconds per request and made every later read of
 * its queue fail.
 */

/** Properties per message. */
export const MAX_MESSAGE_PROPERTIES = 1000;

/** The UTF-8 bytes of a message's property names and values together. */
export const MAX_PROPERTY_BYTES = 64 * 1024;

// --- flows, message logs and the event log -------------------------------------------------------

/** Messages of one `sendFlow`. */
export const MAX_FLOW_NODES = 1000;

/** The UTF-8 bytes of one line of a message's log. */
export const MAX_LOG_LINE_BYTES = 4096;

/** Lines of one `appendMessageLog` call. */
export const MAX_LOG_LINES_PER_CALL = 100;

/** Lines a message's log keeps (the oldest go first): with the line cap, at most 4 MiB per message. */
export const MAX_MESSAGE_LOG_LINES = 1000;

/** Events of one `appendEvents` call. */
export const MAX_EVENTS_PER_CALL = 1000;

/** The UTF-8 bytes of one event's data. */
export const MAX_EVENT_DATA_BYTES = 8192;

/** Events the event log keeps (the oldest go first). */
export const MAX_EVENT_LOG_EVENTS = 10_000;

/** How long the event log keeps an event: 24 hours. */
export const EVENT_LOG_RETENTION_MS = 24 * 3600 * 1000;
