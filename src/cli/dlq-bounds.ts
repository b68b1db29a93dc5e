import { UsageError } from "./errors.js";

/**
 * The bounds of a redrive or purge as the original checks them: neither negative, and an age
 * bound, when given, at least 1 ms (it is then truncated to whole milliseconds).
 */
export function dlqBounds(max: number, olderThanMs: number): { max: number; olderThanMs: number } {
  if (max < 0 || olderThanMs < 0) throw new UsageError("--max and --older-than must be >= 0");
  if (olderThanMs > 0 && olderThanMs < 1)
    throw new UsageError(`--older-than must be at least 1ms (got ${Math.round(olderThanMs * 1000)}µs)`);
  return { max, olderThanMs: Math.trunc(olderThanMs) };
}
