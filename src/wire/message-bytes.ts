import type { Message } from "../contract/types.js";
import { messageToWire } from "./message.js";

/** Bodies from this size on are written into the JSON's bytes in pieces (`messageJsonBytes`). */
export const LARGE_BODY_BYTES = 64 * 1024;

/** Body bytes per base64 piece: a multiple of 3, so the pieces' encodings join into the whole's. */
const PIECE_BYTES = 48 * 1024;

/** A one-byte body stands in for the real one; its base64 is what the real one replaces. */
const STAND_IN = Buffer.from([0]);
const STAND_IN_JSON = `"body":"${STAND_IN.toString("base64")}"`;

/**
 * The UTF-8 bytes of `JSON.stringify(messageToWire(m))`, for a message with a large body, made
 * without the body's base64 as one string: that string and its JSON copy (a megabyte each for a
 * 1 MiB body) are born in the old generation and live until a full collection, so a 32 MiB Peek
 * answer left hundreds of megabytes to collect. The body is encoded in pieces of 64 KiB, written
 * straight into the bytes. Undefined for a smaller body: its text is cheaper.
 */
export function messageJsonBytes(m: Message): Buffer | undefined {
  const body = m.body;
  if (!body || body.length < LARGE_BODY_BYTES) return undefined;
  const text = JSON.stringify(messageToWire({ ...m, body: STAND_IN }));
  // The body's key is the last one that can read so: later fields are numbers and the queue (a
  // string, where a quote is escaped), and a property named "body" comes before it.
  const at = text.lastIndexOf(STAND_IN_JSON);
  const head = Buffer.from(text.slice(0, at + 8)); // up to the body's opening quote
  const tail = Buffer.from(text.slice(at + STAND_IN_JSON.length - 1)); // from its closing quote
  const encoded = 4 * Math.ceil(body.length / 3);
  const out = Buffer.allocUnsafe(head.length + encoded + tail.length);
  let offset = head.copy(out, 0);
  for (let from = 0; from < body.length; from += PIECE_BYTES) {
    const piece = body.subarray(from, Math.min(from + PIECE_BYTES, body.length));
    offset += out.write(piece.toString("base64"), offset, "latin1");
  }
  tail.copy(out, offset);
  return out;
}
