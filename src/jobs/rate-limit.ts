import { QueueError } from "./errors.js";

/** A rate limit: `"100/s"`, `"20/m"`, `"1000/h"`. */
export type RateLimit = `${number}/${"s" | "m" | "h"}`;

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000 } as const;

/** Parses a rate limit into a token bucket (`limit` per `intervalMs`); throws `QueueError` on a bad one. */
export function parseRateLimit(spec: string): { limit: number; intervalMs: number } {
  const m = /^\s*(\d+)\s*\/\s*([smh])\s*$/.exec(spec);
  const limit = m ? Number(m[1]) : 0;
  if (!m || !Number.isSafeInteger(limit) || limit < 1) {
    throw new QueueError(`invalid rate limit "${spec}": expected "<n>/s", "<n>/m" or "<n>/h" with n ≥ 1`);
  }
  return { limit, intervalMs: UNIT_MS[m[2] as keyof typeof UNIT_MS] };
}
