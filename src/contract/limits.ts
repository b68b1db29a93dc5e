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
