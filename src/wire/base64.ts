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

/** Decodes standard base64 that `isStdBase64` accepted. */
export function decodeBase64(text: string): Buffer {
  return Buffer.from(stripNewlines(text), "base64");
}

/** Encodes bytes as standard padded base64. */
export function encodeBase64(bytes: Uint8Array): string {
  return (
    Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  ).toString("base64");
}
