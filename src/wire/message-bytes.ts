import type { Message } from "../contract/types.js";
import { messageToWire } from "./message.js";

/** Bodies from this size on are written into the JSON's bytes in pieces (`messageJsonBytes`). */
export const LARGE_BODY_BYTES = 64 * 1024;

/** Body bytes per base64 piece: a multiple of 3, so the pieces' encodings join into the whole's. */
const PIECE_BYTES = 48 * 1024;

/** Whether `messageJsonBytes` writes the message as bytes: its body is large. */
export const hasLargeBody = (m: Message): boolean => (m.body?.length ?? 0) >= LARGE_BODY_BYTES;

/** A one-byte body stands in for the real one; its base64 is what the real one replaces. */
const STAND_IN = Buffer.from([0]);
const STAND_IN_JSON = `"body":"${STAND_IN.toString("base64")}"`;

/**
 * The UTF-8 bytes of `JSON.stringify(messageToWire(m))`, for a message with a large body, in
 * pieces, made without the body's base64 as one string: that string and its JSON copy (a megabyte
 * each for a 1 MiB body) are born in the old generation and live until a full collection, so a 32
 * MiB Peek answer left hundreds of megabytes to collect. The body is encoded 48 KiB at a time,
 * each piece's base64 (64 KiB) its own buffer: under glibc's mmap threshold as `npm start` sets it
 * (128 KiB), so the pieces come from memory the allocator keeps, where one buffer of the whole
 * would be mapped afresh and every page of it faulted in as it is written (4 ms a MiB against 1
 * on a virtual machine whose page faults cost 10 µs). Undefined for a smaller body: its text is
 * cheaper.
 */
export function messageJsonBytes(m: Message): Buffer[] | undefined {
  if (!hasLargeBody(m)) return undefined;
  const body = m.body;
  const text = JSON.stringify(messageToWire({ ...m, body: STAND_IN }));
  // The body's key is the last one that can read so: later fields are numbers and the queue (a
  // string, where a quote is escaped), and a property named "body" comes before it.
  const at = text.lastIndexOf(STAND_IN_JSON);
  const pieces = [Buffer.from(text.slice(0, at + 8))]; // up to the body's opening quote
  for (let from = 0; from < body.length; from += PIECE_BYTES) {
    const piece = body.subarray(from, Math.min(from + PIECE_BYTES, body.length));
    pieces.push(Buffer.from(piece.toString("base64"), "latin1"));
  }
  pieces.push(Buffer.from(text.slice(at + STAND_IN_JSON.length - 1))); // from its closing quote
  return pieces;
}
