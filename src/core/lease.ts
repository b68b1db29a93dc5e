import { InvalidArgumentError } from "../contract/errors.js";
import { MIN_LEASE_CAP_MS } from "../contract/limits.js";
import { MAX_DURATION_MS } from "./validate.js";

export { MIN_LEASE_CAP_MS };

/**
 * A claim's or renewal's `lockDurationMs`: absent means no cap (0); otherwise an integer from
 * `MIN_LEASE_CAP_MS` to `MAX_DURATION_MS`. Checked by every broker before it touches the store.
 */
export function leaseCap(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== "number" || !Number.isInteger(value))
    throw new InvalidArgumentError("mqlite: lock_duration_ms must be an integer");
  if (value < MIN_LEASE_CAP_MS || value > MAX_DURATION_MS)
    throw new InvalidArgumentError(
      `mqlite: lock_duration_ms must be from ${MIN_LEASE_CAP_MS} to ${MAX_DURATION_MS} ms`,
    );
  return value;
}

/** How a dialect names the lease's operands in its SQL. */
export interface LeaseParams {
  /** The message's own lease (its `lock_duration_ms` column; 0 when it has none). */
  own: string;
  /** The queue's lock duration. */
  queue: string;
  /** The caller's cap (`lockDurationMs` of the claim or renewal; 0 when none). */
  cap: string;
}

/**
 * How long a claim or renewal leases a message, for both dialects: the message's own lease when it
 * has one, else the queue's, and never longer than the caller's cap. The job face stores a job's
 * timeout in the message's own lease and caps every claim and renewal at its `leaseMs`, so a dead
 * worker's job comes back within `leaseMs` whatever its timeout.
 */
export function leaseDuration(p: LeaseParams): string {
  const chosen = `(CASE WHEN ${p.own} > 0 THEN ${p.own} ELSE ${p.queue} END)`;
  return `(CASE WHEN ${p.cap} > 0 AND ${p.cap} < ${chosen} THEN ${p.cap} ELSE ${chosen} END)`;
}

/** `leaseDuration`'s rule in numbers, for a lease the core computes before its row is stored. */
export function leaseMs(own: number, queue: number, cap: number): number {
  const chosen = own > 0 ? own : queue;
  return cap > 0 && cap < chosen ? cap : chosen;
}
