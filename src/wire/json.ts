import { InvalidArgumentError } from "../contract/errors.js";

/**
 * Strings (skipped whole, escapes included) or number literals. The unrolled string pattern keeps
 * the regex engine from backtracking through a multi-megabyte base64 body.
 */
const TOKENS = /"[^"\\]*(?:\\.[^"\\]*)*"|-?\d+(\.\d+)?([eE][+-]?\d+)?/g;

/**
 * The first number literal written with a fraction or an exponent (`1.0`, `1e3`), or undefined.
 * Every number of every request is an integer, and Go refuses `1.0` for an int field, so such a
 * literal is a type mismatch wherever it stands. `JSON.parse` alone cannot tell `1.0` from `1`.
 */
function nonIntegerLiteral(text: string): string | undefined {
  if (!/[.eE]/.test(text)) return undefined;
  TOKENS.lastIndex = 0;
  for (let m = TOKENS.exec(text); m !== null; m = TOKENS.exec(text)) {
    if (m[1] !== undefined || m[2] !== undefined) return m[0];
  }
  return undefined;
}

/**
 * Whether a parsed value holds a number anywhere. Only then can its text hold a number literal
 * (keys are strings), so a request of strings alone, such as a Send whose base64 bodies are full of
 * `e`s, skips the literal scan. Iterative: a parsed value may be nested far deeper than the stack.
 */
function holdsNumber(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === "number") return true;
    if (value === null || typeof value !== "object") continue;
    if (Array.isArray(value)) {
      for (const v of value) stack.push(v);
    } else {
      for (const key in value) stack.push((value as Record<string, unknown>)[key]);
    }
  }
  return false;
}

/** A lone surrogate, raw or as a `\uXXXX` escape (an escaped pair is checked after parsing). */
const MAYBE_LONE_SURROGATE =
  /\\u[dD][89a-fA-F]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const replaceLone = (s: string) => s.replace(LONE_SURROGATES, "\ufffd");

/**
 * Replaces the lone surrogates of every string (keys included) of a parsed value by U+FFFD, in
 * place. Iterative: a parsed value may be nested far deeper than the stack allows.
 */
function makeWellFormed(root: unknown): void {
  const stack: unknown[] = [root];
  const define = (o: object, key: string, value: unknown) =>
    Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  while (stack.length > 0) {
    const value = stack.pop();
    if (value === null || typeof value !== "object") continue;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        if (typeof v === "string") value[i] = replaceLone(v);
        else stack.push(v);
      }
      continue;
    }
    const o = value as Record<string, unknown>;
    for (const key of Object.keys(o)) {
      const v = o[key];
      const fixedKey = replaceLone(key);
      const fixed = typeof v === "string" ? replaceLone(v) : v;
      if (typeof v !== "string") stack.push(v);
      if (fixedKey !== key) delete o[key];
      if (fixedKey !== key || fixed !== v) define(o, fixedKey, fixed);
    }
  }
}

/**
 * Decodes a request body the way the original's strict decoder does: exactly one JSON object,
 * nothing after it but whitespace, every number an integer. Failures are `InvalidArgumentError`
 * (400 `invalid_argument`) with the decoder's message. As Go's decoder, a lone surrogate (which
 * `\ud800` can write, and which has no UTF-8 form) becomes U+FFFD.
 */
export function decodeJsonObject(text: string): Record<string, unknown> {
  if (text.trim() === "") throw new InvalidArgumentError("EOF");
  const value = decodeJsonValue(text);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
    throw new InvalidArgumentError(`json: cannot unmarshal ${kind} into a request object`);
  }
  return value as Record<string, unknown>;
}

/** `decodeJsonObject`'s rules for any JSON value (an item of a request's list, decoded on its own). */
export function decodeJsonValue(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new InvalidArgumentError(`json: ${(err as Error).message}`);
  }
  const literal = holdsNumber(value) ? nonIntegerLiteral(text) : undefined;
  if (literal !== undefined) {
    throw new InvalidArgumentError(`json: cannot unmarshal number ${literal} into an integer field`);
  }
  if (!MAYBE_LONE_SURROGATE.test(text)) return value;
  if (typeof value === "string") return replaceLone(value);
  if (value !== null && typeof value === "object") makeWellFormed(value);
  return value;
}

/** Encodes a response body as Go's JSON encoder does: compact, with a trailing newline. */
export function encodeJson(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}
