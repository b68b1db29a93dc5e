/**
 * Go strings are byte sequences; ours are JS strings. These helpers give byte-offset semantics
 * (slicing, indexOf, indexing) and rune counts, with an ASCII fast path.
 */

const NON_ASCII = /[^\x00-\x7f]/;
const encoder = new TextEncoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true });

export function isAscii(s: string): boolean {
  return !NON_ASCII.test(s);
}

export function utf8Bytes(s: string): Uint8Array {
  return encoder.encode(s);
}

/** Number of UTF-8 bytes of a string. */
export function byteLength(s: string): number {
  if (isAscii(s)) return s.length;
  return Buffer.byteLength(s, "utf8");
}

/** Number of runes (code points). */
export function runeCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/**
 * Decodes bytes as Go does when it converts them to runes: each invalid byte becomes U+FFFD.
 */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    // Fall through to the per-byte decoder below.
  }
  let out = "";
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const b0 = bytes[i] as number;
    if (b0 < 0x80) {
      out += String.fromCharCode(b0);
      i++;
      continue;
    }
    let need = 0;
    let cp = 0;
    let min = 0;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
      need = 1;
      cp = b0 & 0x1f;
      min = 0x80;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      need = 2;
      cp = b0 & 0x0f;
      min = 0x800;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      need = 3;
      cp = b0 & 0x07;
      min = 0x10000;
    } else {
      out += "\ufffd";
      i++;
      continue;
    }
    if (i + need >= n) {
      out += "\ufffd";
      i++;
      continue;
    }
    let ok = true;
    for (let k = 1; k <= need; k++) {
      const b = bytes[i + k];
      if (b === undefined || (b & 0xc0) !== 0x80) {
        ok = false;
        break;
      }
      cp = (cp << 6) | (b & 0x3f);
    }
    if (!ok || cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      out += "\ufffd";
      i++;
      continue;
    }
    out += String.fromCodePoint(cp);
    i += need + 1;
  }
  return out;
}

/** Go s[a:b] with byte offsets (already clamped). */
export function sliceBytes(s: string, a: number, b: number): string {
  if (isAscii(s)) return s.slice(a, b);
  return decodeUtf8(utf8Bytes(s).subarray(a, b));
}

/** Go strings.Index: byte offset of the first occurrence, or -1. */
export function byteIndexOf(s: string, sub: string): number {
  const i = s.indexOf(sub);
  if (i <= 0) return i;
  return byteLength(s.slice(0, i));
}

/** Go strings.LastIndex: byte offset of the last occurrence, or -1. */
export function byteLastIndexOf(s: string, sub: string): number {
  const i = s.lastIndexOf(sub);
  if (i <= 0) return i;
  return byteLength(s.slice(0, i));
}

/** The byte at a byte offset (Go s[i] on an untyped string). */
export function byteAt(s: string, i: number): number {
  if (isAscii(s)) return s.charCodeAt(i);
  return utf8Bytes(s)[i] as number;
}

/** Compares two strings by UTF-8 bytes (equivalently, by code points). */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x !== y) {
      // Move surrogates above the rest of the BMP so UTF-16 order becomes code point order.
      if (x >= 0xd800) x = x <= 0xdfff ? x + 0x2000 : x - 0x800;
      if (y >= 0xd800) y = y <= 0xdfff ? y + 0x2000 : y - 0x800;
      return x < y ? -1 : 1;
    }
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
