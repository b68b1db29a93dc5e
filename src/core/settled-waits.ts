import type { Clock } from "./clock.js";
import { waitAny } from "./wait-any.js";
import type { Waiters } from "./waiters.js";

/** `awaitSettled` re-checks at least this often by default (reaper and TTL settlements do not notify). */
const RECHECK_MS = 1000;

/**
 * `awaitSettled`: parks on the messages' settlement wake-ups (notified after every commit that
 * settles one in this process, and on other connections' commits), re-checking their states.
 */
export async function awaitSettled(
  clock: Clock,
  waiters: Waiters,
  settled: () => Promise<number[]>,
  seqs: number[],
  waitMs: number,
  signal: AbortSignal | undefined,
  recheckMs = RECHECK_MS,
): Promise<number[]> {
  // The wait is measured in real time: an injected clock (a manual one in tests) need not move.
  const started = performance.now();
  const left = () => waitMs - (performance.now() - started);
  const keys = seqs.map(String);
  for (;;) {
    const now = clock.now();
    const waiter = waitAny(waiters, keys, now + Math.max(0, Math.min(left(), recheckMs)), now, signal);
    waiter.woken.catch(() => {});
    let done: number[];
    try {
      done = await settled();
    } catch (err) {
      waiter.cancel();
      throw err;
    }
    if (done.length > 0 || left() <= 0 || signal?.aborted) {
      waiter.cancel();
      return done;
    }
    await waiter.woken;
  }
}
