/** Exponential retry backoff: the first retry waits `baseMs`, each next one twice as long, capped at `maxMs`. */
export interface RetryBackoff {
  /** Default 1000. */
  baseMs?: number;
  /** Default 300000 (5 minutes). */
  maxMs?: number;
}

export const DEFAULT_BACKOFF = { baseMs: 1000, maxMs: 300_000 } as const;

/** The delay before retry number `retry` (1 = the first retry). */
export function backoffDelay(backoff: RetryBackoff | undefined, retry: number): number {
  const base = Math.max(0, backoff?.baseMs ?? DEFAULT_BACKOFF.baseMs);
  const cap = Math.max(0, backoff?.maxMs ?? DEFAULT_BACKOFF.maxMs);
  const exp = Math.min(Math.max(0, retry - 1), 52);
  return Math.min(cap, Math.round(base * 2 ** exp));
}
