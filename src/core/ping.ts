/**
 * The round trip of a status probe since `started` (a `performance.now()` reading), in whole
 * milliseconds, truncated: the wire's `ping_ms` is an integer (Go's `Duration.Milliseconds()`), so
 * the original's clients can decode it. A probe under a millisecond reads 0.
 */
export function pingMsSince(started: number): number {
  return Math.floor(performance.now() - started);
}
