import { QueueError } from "./errors.js";

/**
 * Exponential retry backoff: the first retry waits `baseMs`, each next one twice as long, capped at
 * `maxMs`. `type` may be left out (this is the default form).
 */
export interface ExponentialBackoff {
  type?: "exponential";
  /** Default 1000. */
  baseMs?: number;
  /** Default 300000 (5 minutes). */
  maxMs?: number;
}

/** Every retry waits the same `delayMs`. */
export interface FixedBackoff {
  type: "fixed";
  delayMs: number;
}

/**
 * A custom backoff: the delay (ms) before the next attempt, given the number of the attempt that
 * failed (1 = the first) and its error. A function that throws, or returns anything but a finite
 * number ≥ 0, gets the default exponential delay for that retry instead (and a warning is logged).
 */
export type BackoffFunction = (attempt: number, error: unknown) => number;

/** How long a job waits before its next attempt: exponential (the default), fixed, or a function. */
export type RetryBackoff = ExponentialBackoff | FixedBackoff | BackoffFunction;

export const DEFAULT_BACKOFF = { baseMs: 1000, maxMs: 300_000 } as const;
/** The longest delay a backoff may ask for (the broker's longest delay: ten years). */
export const MAX_BACKOFF_MS = 10 * 365 * 24 * 3600 * 1000;

function isDelay(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= MAX_BACKOFF_MS;
}

/** Refuses a backoff whose delays are negative, not numbers, or of an unknown type (at task registration). */
export function validateBackoff(backoff: RetryBackoff | undefined): void {
  if (backoff === undefined || typeof backoff === "function") return;
  if (typeof backoff !== "object" || backoff === null)
    throw new QueueError("retryBackoff must be an object or a function");
  if (backoff.type === "fixed") {
    if (!isDelay(backoff.delayMs))
      throw new QueueError("retryBackoff.delayMs must be a number of ms, 0 or more (at most ten years)");
    return;
  }
  if (backoff.type !== undefined && backoff.type !== "exponential")
    throw new QueueError(`retryBackoff.type must be "fixed" or "exponential", not ${String(backoff.type)}`);
  for (const key of ["baseMs", "maxMs"] as const) {
    const v = backoff[key];
    if (v !== undefined && !isDelay(v))
      throw new QueueError(`retryBackoff.${key} must be a number of ms, 0 or more (at most ten years)`);
  }
}

function exponential(backoff: ExponentialBackoff | undefined, retry: number): number {
  const base = Math.max(0, backoff?.baseMs ?? DEFAULT_BACKOFF.baseMs);
  const cap = Math.max(0, backoff?.maxMs ?? DEFAULT_BACKOFF.maxMs);
  const exp = Math.min(Math.max(0, retry - 1), 52);
  return Math.min(cap, Math.round(base * 2 ** exp));
}

/**
 * The delay before retry number `retry` (1 = the first retry, after attempt 1 failed). `onBadValue`
 * hears of a custom function that threw or gave a bad value (the default delay is used then).
 */
export function backoffDelay(
  backoff: RetryBackoff | undefined,
  retry: number,
  error?: unknown,
  onBadValue?: (problem: string) => void,
): number {
  if (typeof backoff === "function") {
    let value: unknown;
    try {
      value = backoff(retry, error);
    } catch (err) {
      onBadValue?.(`retryBackoff threw: ${String(err)}`);
      return exponential(undefined, retry);
    }
    if (isDelay(value)) return Math.round(value);
    onBadValue?.(`retryBackoff returned ${String(value)}, not a delay in ms`);
    return exponential(undefined, retry);
  }
  if (backoff?.type === "fixed") return Math.round(backoff.delayMs);
  return exponential(backoff, retry);
}
