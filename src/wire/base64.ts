import type { ItemBytes } from "./json-shape.js";

/**
 * Standard alphabet with at most two `=` at the end; with the length a multiple of 4 this is exactly
 * padded base64, as Go's `base64.StdEncoding` accepts it (after dropping CR and LF). A single
 * character class keeps the regex linear on a 32 MiB body.
 */
const STD_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function stripNewlines(text: string): string {
  return text.includes("\n") || text.includes("\r") ? text.replace(/[\r\n]/g, "") : text;
}

/** True when `text` is standard padded base64 (CR and LF ignored, as Go does). */
export function isStdBase64(text: string): boolean {
  const bare = stripNewlines(text);
  return bare.length % 4 === 0 && STD_BASE64.test(bare);
}

/** The length of the bytes padded base64 `bare` (no CR or LF) stands for. */
function decodedLength(bare: string): number {
  const padding = bare.endsWith("==") ? 2 : bare.endsWith("=") ? 1 : 0;
  return (bare.length / 4) * 3 - padding;
}

/**
 * Decodes standard base64 that `isStdBase64` accepted. With `place` (bytes already read, see
 * `ItemBytes`), into them when the bytes fit: the answer is a view of the request's own buffer, and
 * a 32 MiB Send of 24 MB of bodies takes no second 24 MB.
 */
export function decodeBase64(text: string, place?: ItemBytes): Buffer {
  const bare = stripNewlines(text);
  if (place && bare.length % 4 === 0) {
    const size = decodedLength(bare);
    if (size <= place.end - place.start && place.bytes.write(bare, place.start, size, "base64") === size)
      return place.bytes.subarray(place.start, place.start + size);
  }
  return Buffer.from(bare, "base64");
}

/** Encodes bytes as standard padded base64. */
export function encodeBase64(bytes: Uint8Array): string {
  return (
    Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  ).toString("base64");
}
