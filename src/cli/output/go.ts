/**
 * Formatting that scripts written against the original CLI (a Go program) compare byte for byte:
 * `%q` quoting, `encoding/json`'s escaping, `%-Ns` padding, RFC 3339 times, durations.
 */

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;
const SHORT_ESCAPES: Record<number, string> = {
  7: "\\a",
  8: "\\b",
  9: "\\t",
  10: "\\n",
  11: "\\v",
  12: "\\f",
  13: "\\r",
};

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");

/** The code point at `i` and its length in bytes, or undefined when the bytes there are not UTF-8. */
function decodeRune(b: Uint8Array, i: number): [number, number] | undefined {
  const b0 = b[i]!;
  if (b0 < 0x80) return [b0, 1];
  const cont = (k: number, lo = 0x80, hi = 0xbf) => {
    const x = b[i + k];
    return x !== undefined && x >= lo && x <= hi;
  };
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(1) ? [((b0 & 0x1f) << 6) | (b[i + 1]! & 0x3f), 2] : undefined;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const [lo, hi] = b0 === 0xe0 ? [0xa0, 0xbf] : b0 === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    if (!cont(1, lo, hi) || !cont(2)) return undefined;
    return [((b0 & 0x0f) << 12) | ((b[i + 1]! & 0x3f) << 6) | (b[i + 2]! & 0x3f), 3];
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const [lo, hi] = b0 === 0xf0 ? [0x90, 0xbf] : b0 === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    if (!cont(1, lo, hi) || !cont(2) || !cont(3)) return undefined;
    const cp =
      ((b0 & 0x07) << 18) | ((b[i + 1]! & 0x3f) << 12) | ((b[i + 2]! & 0x3f) << 6) | (b[i + 3]! & 0x3f);
    return [cp, 4];
  }
  return undefined;
}

/** Go's `%q` of a byte string (`strconv.Quote`): printable text as is, everything else escaped. */
export function goQuote(bytes: Uint8Array | string): string {
  const b = typeof bytes === "string" ? Buffer.from(bytes) : bytes;
  let out = '"';
  for (let i = 0; i < b.length; ) {
    // Runs of plain printable ASCII are copied in one piece (bodies can be megabytes).
    const start = i;
    while (i < b.length && b[i]! >= 0x20 && b[i]! < 0x7f && b[i] !== 0x22 && b[i] !== 0x5c) i++;
    if (i > start) {
      out += Buffer.from(b.buffer, b.byteOffset + start, i - start).toString("latin1");
      continue;
    }
    const rune = decodeRune(b, i);
    if (!rune) {
      out += `\\x${hex(b[i]!, 2)}`;
      i++;
      continue;
    }
    const [cp, width] = rune;
    i += width;
    const ch = String.fromCodePoint(cp);
    if (cp === 0x22 || cp === 0x5c) out += `\\${ch}`;
    else if (cp >= 0x20 && cp < 0x7f) out += ch;
    else if (cp >= 0x80 && PRINTABLE.test(ch)) out += ch;
    else if (SHORT_ESCAPES[cp]) out += SHORT_ESCAPES[cp];
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return `${out}"`;
}

/**
 * JSON as Go's `json.MarshalIndent(v, "", "  ")` writes it, plus a newline: `<`, `>`, `&`, U+2028
 * and U+2029 escaped, a lone surrogate replaced by U+FFFD. Object keys keep their insertion order,
 * so callers build objects in the original's order (sorted for maps, declaration order for structs).
 */
export function goJson(value: unknown): string {
  return `${goEscape(JSON.stringify(value, null, 2))}\n`;
}

/** Applies Go's extra escaping to JSON text (the characters only occur inside strings). */
export function goEscape(json: string): string {
  return json
    .replace(/[<>&\u2028\u2029]/g, (c) => `\\u${hex(c.charCodeAt(0), 4)}`)
    .replace(/\\ud[89a-f][0-9a-f]{2}/g, "\\ufffd");
}

/** `%-Ns`: pads on the right to `width` code points, never truncates. */
export function padRight(text: string, width: number): string {
  const length = [...text].length;
  return length >= width ? text : text + " ".repeat(width - length);
}

/** An instant as Go's `time.RFC3339Nano` in UTC: trailing fractional zeros trimmed. */
export function rfc3339Nano(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/\.?0+Z$/, "Z")
    .replace(/\.Z$/, "Z");
}

/** A whole number of seconds as Go's `time.Duration.String()`: `0s`, `45s`, `5m0s`, `1h2m3s`. */
export function goSeconds(totalSeconds: number): string {
  const s = Math.max(0, Math.round(totalSeconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${h}h${m}m${sec}s`;
  if (m > 0) return `${m}m${sec}s`;
  return `${sec}s`;
}
