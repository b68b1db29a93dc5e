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

/** Sequence numbers of one `promoteMessages` or `removeMessages` call. */
export const MAX_SEQ_NUMBERS_PER_CALL = 1000;

/** The largest `keepNewest` of `deleteSettled`. */
export const MAX_KEEP_NEWEST = 1_000_000;

/** Events of one `appendEvents` call. */
export const MAX_EVENTS_PER_CALL = 1000;

/** The UTF-8 bytes of one event's data. */
export const MAX_EVENT_DATA_BYTES = 8192;

/** Events the event log keeps (the oldest go first). */
export const MAX_EVENT_LOG_EVENTS = 10_000;

/** How long the event log keeps an event: 24 hours. */
export const EVENT_LOG_RETENTION_MS = 24 * 3600 * 1000;

// --- job metrics and debounce windows ------------------------------------------------------------

/** The width of a metrics bucket: one minute. */
export const METRIC_BUCKET_MS = 60_000;

/** How long metrics buckets are kept, and the widest range one read covers: 7 days (10,080 buckets). */
export const METRICS_RETENTION_MS = 7 * 24 * 3600 * 1000;

/** Increments of one `addMetrics` call. */
export const MAX_METRIC_INCREMENTS_PER_CALL = 1000;

/** The largest count of one increment. */
export const MAX_METRIC_INCREMENT = 1_000_000;

/** The UTF-8 bytes of a debounce window's key. */
export const MAX_DEBOUNCE_KEY_BYTES = 1024;

/** The longest debounce window and wait: 30 days. */
export const MAX_DEBOUNCE_MS = 30 * 24 * 3600 * 1000;

// Caps of a served request, checked while it is decoded and before any work: one request of a
// million items, or nested a million levels deep, froze a served broker for seconds and took
// gigabytes. The original caps only RenewBatch (512) and the 32 MiB body; these are high enough
// that none of its clients meet them.

/**
 * Bytes of bodies and properties of one answer that lists messages (a read's `maxBytes` at most):
 * the read stops after the message that crosses it.
 */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/**
 * The answer budget a read's `maxBytes` asks for (once asked, when it is a function): a number of
 * at least 1, floored, at most `MAX_ANSWER_BYTES`; anything else (absent, not positive, not a
 * number) the most.
 */
export function askedAnswerBytes(n: unknown): number {
  return typeof n === "number" && n >= 1 ? Math.min(Math.floor(n), MAX_ANSWER_BYTES) : MAX_ANSWER_BYTES;
}

/** Bytes of one request body (the original's MaxBodyBytes, 32 MiB); 413 beyond. */
export const MAX_REQUEST_BYTES = 32 * 1024 * 1024;

/** Items of one list in a request: Send's and CompleteBatch's messages, lists of sequence numbers. */
export const MAX_BATCH_ITEMS = 10_000;

/** Locks renewed by one RenewBatch (the original's cap). */
export const MAX_RENEW_BATCH = 512;

/** Names in one list of a request (queues, states, claim gates). */
export const MAX_NAME_LIST = 1_000;

/** Nesting levels of a request's JSON (the deepest valid request has five). */
export const MAX_JSON_DEPTH = 64;

/** Keys of one JSON object of a request (a message has at most this many properties). */
export const MAX_OBJECT_KEYS = MAX_MESSAGE_PROPERTIES;

/**
 * Array items and object keys of one request together (a Send of 10,000 messages with a dozen
 * properties each fits): without it, 2,000 messages of 1,000 properties each stay under every other
 * cap and take seconds to decode.
 */
export const MAX_REQUEST_ENTRIES = 250_000;

/**
 * The shortest lease a claim or a renewal may ask for (`lockDurationMs`): a shorter one would lapse
 * between two renewals of a holder that is merely busy, and hand its message to a second holder.
 */
export const MIN_LEASE_CAP_MS = 1000;

/** The longest duration mqlite accepts anywhere (ten years): longer is a mistake, not a plan. */
export const MAX_DURATION_MS = 10 * 365 * 24 * 3600 * 1000;
