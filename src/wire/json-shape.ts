import { InvalidArgumentError } from "../contract/errors.js";
import { MAX_BATCH_ITEMS, MAX_JSON_DEPTH, MAX_OBJECT_KEYS, MAX_REQUEST_ENTRIES } from "../contract/limits.js";

/** The caps `refuseOversizedJson` applies. */
export interface JsonShapeCaps {
  /** Nesting levels (the top-level object is level 1). */
  maxDepth: number;
  /** Items of one array. */
  maxItems: number;
  /** Keys of one object. */
  maxKeys: number;
  /** Array items and object keys of the whole text together. */
  maxEntries: number;
}

export const REQUEST_SHAPE_CAPS: JsonShapeCaps = {
  maxDepth: MAX_JSON_DEPTH,
  maxItems: MAX_BATCH_ITEMS,
  maxKeys: MAX_OBJECT_KEYS,
  maxEntries: MAX_REQUEST_ENTRIES,
};

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Where a list that is the value of a top-level field lies in the text: its brackets and the commas
 * between its items (so each item can be decoded on its own).
 */
export interface TopLevelList {
  open: number;
  close: number;
  commas: number[];
}

/**
 * A JSON text: a string, or its UTF-8 bytes (a large request body, never decoded whole). The
 * characters the scan looks for are ASCII, and no byte of a multi-byte UTF-8 sequence is, so the
 * bytes are scanned as the text is; positions are then byte offsets.
 */
export type JsonText = string | Buffer;

/**
 * Where a list item's text lies in a request's bytes. Once the item is decoded its text is not
 * read again, so what the item becomes may be written there (a body decoded from base64 is shorter
 * than its text) instead of into new memory.
 */
export interface ItemBytes {
  bytes: Buffer;
  start: number;
  end: number;
}

/** The character (string) or byte (bytes) at `i`. */
function codeAt(text: JsonText, i: number): number {
  return typeof text === "string" ? text.charCodeAt(i) : text[i]!;
}

/** The next double quote at or after `from` (a native search either way), or -1. */
function nextQuote(text: JsonText, from: number): number {
  return typeof text === "string" ? text.indexOf('"', from) : text.indexOf(QUOTE, from);
}

/** The index of the quote closing the string whose opening quote is at `open`, or -1. */
function stringEnd(text: JsonText, open: number): number {
  let at = nextQuote(text, open + 1);
  while (at !== -1) {
    let slashes = 0;
    for (let i = at - 1; codeAt(text, i) === BACKSLASH; i--) slashes++;
    if (slashes % 2 === 0) return at;
    at = nextQuote(text, at + 1);
  }
  return -1;
}

/** Counters of open containers: each level is set as it opens, so no level is read stale. */
interface Scratch {
  commas: Int32Array;
  isArray: Uint8Array;
}
let scratch: Scratch = { commas: new Int32Array(0), isArray: new Uint8Array(0) };

/**
 * The counters for `maxDepth` levels, kept between calls: two typed arrays allocated per request
 * cost as much as the scan of a small request. The scan is synchronous, so calls never share them.
 */
function scratchFor(maxDepth: number): Scratch {
  if (scratch.commas.length < maxDepth + 1)
    scratch = { commas: new Int32Array(maxDepth + 1), isArray: new Uint8Array(maxDepth + 1) };
  return scratch;
}

/**
 * Refuses a JSON text nested deeper, or holding a longer array or a bigger object, than `caps`
 * allow, before it is parsed: one pass over the text that stops at the first excess, so a body of
 * four million items is refused after reading the first ten thousand, and one nested eight million
 * levels deep after 64 characters. Strings are skipped whole (a native search for their closing
 * quote). It only counts: malformed JSON is left to the parser, which refuses it.
 */
export function refuseOversizedJson(
  text: JsonText,
  caps: JsonShapeCaps = REQUEST_SHAPE_CAPS,
  lists?: TopLevelList[],
): void {
  // Per open container: its separators so far (items are separators + 1) and whether it is an array.
  const { commas, isArray } = scratchFor(caps.maxDepth);
  let depth = 0;
  let entries = 0;
  let current: TopLevelList | undefined;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const ch = codeAt(text, i);
    if (ch === QUOTE) {
      const end = stringEnd(text, i);
      if (end === -1) return;
      i = end;
    } else if (ch === COMMA) {
      if (depth === 0) continue;
      const items = ++commas[depth]! + 1;
      if (depth === 2 && current) current.commas.push(i);
      if (++entries > caps.maxEntries) {
        throw new InvalidArgumentError(`json: more than ${caps.maxEntries} items and keys in one request`);
      }
      if (isArray[depth] === 1) {
        if (items > caps.maxItems) {
          throw new InvalidArgumentError(
            `json: an array of more than ${caps.maxItems} items (a request list holds at most ${caps.maxItems})`,
          );
        }
      } else if (items > caps.maxKeys) {
        throw new InvalidArgumentError(
          `json: an object of more than ${caps.maxKeys} keys (a message has at most ${caps.maxKeys} properties)`,
        );
      }
    } else if (ch === OPEN_ARRAY || ch === OPEN_OBJECT) {
      if (++depth > caps.maxDepth) {
        throw new InvalidArgumentError(`json: nested deeper than ${caps.maxDepth} levels`);
      }
      commas[depth] = 0;
      isArray[depth] = ch === OPEN_ARRAY ? 1 : 0;
      if (lists && depth === 2 && ch === OPEN_ARRAY && isArray[1] === 0)
        current = { open: i, close: -1, commas: [] };
    } else if (ch === CLOSE_ARRAY || ch === CLOSE_OBJECT) {
      if (depth === 2 && current && ch === CLOSE_ARRAY) {
        current.close = i;
        lists!.push(current);
        current = undefined;
      }
      if (depth > 0) depth--;
    }
  }
}
