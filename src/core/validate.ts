import { InvalidArgumentError } from "../contract/errors.js";
import { MAX_DURATION_MS, MAX_KEEP_NEWEST, MAX_SEQ_NUMBERS_PER_CALL } from "../contract/limits.js";

export { MAX_DURATION_MS };

const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * False for a string with a lone surrogate: it has no UTF-8 form, so SQLite would store bytes that
 * read back as something else (and two different names as one).
 */
export function isWellFormed(value: string): boolean {
  // ES2024 (Node 20+); the project's lib setting is ES2023.
  return (value as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** A name for a queue, subscription or topic: 1..256 characters, no control characters, not blank. */
export function requireName(value: unknown, what: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new InvalidArgumentError(`mqlite: ${what} name is required`);
  }
  if (value.length > 256)
    throw new InvalidArgumentError(`mqlite: ${what} name is longer than 256 characters`);
  if (CONTROL.test(value)) throw new InvalidArgumentError(`mqlite: ${what} name contains control characters`);
  if (!isWellFormed(value))
    throw new InvalidArgumentError(`mqlite: ${what} name is not valid Unicode (a lone surrogate)`);
  if (value.trim().length === 0) throw new InvalidArgumentError(`mqlite: ${what} name is blank`);
  return value;
}

/** An integer (absent → `fallback`); NaN, fractions and values beyond ±`max` are refused. */
export function integer(value: unknown, field: string, fallback = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw new InvalidArgumentError(`mqlite: ${field} must be an integer`);
  }
  if (Math.abs(value) > max) throw new InvalidArgumentError(`mqlite: ${field} is out of range`);
  return value;
}

/** A duration in ms (absent → 0): an integer no longer than `MAX_DURATION_MS` in magnitude. */
export function duration(value: unknown, field: string): number {
  return integer(value, field, 0, MAX_DURATION_MS);
}

/** A duration that must not be negative. */
export function nonNegativeDuration(value: unknown, field: string): number {
  const ms = duration(value, field);
  if (ms < 0) throw new InvalidArgumentError(`mqlite: ${field} must not be negative`);
  return ms;
}

/** A count or bound that must not be negative. */
export function nonNegative(value: unknown, field: string): number {
  const n = integer(value, field);
  if (n < 0) throw new InvalidArgumentError(`mqlite: ${field} must not be negative`);
  return n;
}

/** A sequence number as an integer (any integer; one that matches nothing simply matches nothing). */
export function seqNumber(value: unknown): number {
  return integer(value, "seq_number");
}

/** Clamps `value` into `[min, max]`, replacing ≤0 by `ifNotPositive`. */
export function clampCount(value: number | undefined, ifNotPositive: number, max: number): number {
  const n = value === undefined || !Number.isFinite(value) ? 0 : Math.trunc(value);
  if (n <= 0) return ifNotPositive;
  return Math.min(n, max);
}

/** The sequence numbers of a `promoteMessages` or `removeMessages` call: integers, at most `MAX_SEQ_NUMBERS_PER_CALL`. */
export function seqNumberList(value: unknown): number[] {
  if (!Array.isArray(value)) throw new InvalidArgumentError("mqlite: seq_numbers must be a list");
  if (value.length > MAX_SEQ_NUMBERS_PER_CALL)
    throw new InvalidArgumentError(`mqlite: at most ${MAX_SEQ_NUMBERS_PER_CALL} seq_numbers per call`);
  return value.map(seqNumber);
}

/** `deleteSettled`'s `keepNewest`: absent, or 0..`MAX_KEEP_NEWEST`. */
export function keepNewest(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  const n = integer(value, "keep_newest", 0, MAX_KEEP_NEWEST);
  if (n < 0) throw new InvalidArgumentError("mqlite: keep_newest must not be negative");
  return n;
}
