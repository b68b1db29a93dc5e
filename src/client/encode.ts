import { InvalidArgumentError } from "../contract/errors.js";
import type { CompleteOptions, LockRef, MaxBytes } from "../contract/types.js";
import { encodeBase64 } from "../wire/index.js";

/** A whole number for an int field (the engine truncates the same way); NaN and absent are 0. */
export const whole = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? 0 : Math.trunc(n));

/** A read's `max_bytes` field (a function is asked now), or none when not given. */
export function maxBytesField(maxBytes: MaxBytes | undefined): { max_bytes?: number } {
  if (maxBytes === undefined) return {};
  return { max_bytes: whole(typeof maxBytes === "function" ? maxBytes() : maxBytes) };
}

/** Refuses a negative duration, as the embedded engine does (the wire itself would ignore it). */
export function notNegative(value: number | undefined, field: string): number | undefined {
  if (value !== undefined && value < 0)
    throw new InvalidArgumentError(`mqlite: ${field} must not be negative`);
  return value;
}

/** Lock references on the wire. */
export const lockRefs = (items: LockRef[]) =>
  items.map((i) => ({ seq_number: i.seqNumber, lock_token: i.lockToken }));

/** What Complete keeps (our extension), on the wire. */
export const keep = (o: CompleteOptions | undefined) => ({
  ...(o?.retainMs !== undefined && { retain_ms: o.retainMs }),
  ...(o?.result !== undefined && { result: encodeBase64(o.result) }),
});
