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
 * Decodes a request body the way the original's strict decoder does: exactly one JSON object,
 * nothing after it but whitespace, every number an integer. Failures are `InvalidArgumentError`
 * (400 `invalid_argument`) with the decoder's message.
 */
export function decodeJsonObject(text: string): Record<string, unknown> {
  if (text.trim() === "") throw new InvalidArgumentError("EOF");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new InvalidArgumentError(`json: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
    throw new InvalidArgumentError(`json: cannot unmarshal ${kind} into a request object`);
  }
  const literal = nonIntegerLiteral(text);
  if (literal !== undefined) {
    throw new InvalidArgumentError(`json: cannot unmarshal number ${literal} into an integer field`);
  }
  return value as Record<string, unknown>;
}

/** Encodes a response body as Go's JSON encoder does: compact, with a trailing newline. */
export function encodeJson(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}
