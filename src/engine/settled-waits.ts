import type { Clock } from "../store/clock.js";
import { waitAny } from "./wait-any.js";
import type { Waiters } from "./waiters.js";

/** `awaitSettled` re-checks at least this often (in-process reaper and TTL settlements do not notify). */
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
): Promise<number[]> {
  const deadline = clock.now() + waitMs;
  const keys = seqs.map(String);
  for (;;) {
    const now = clock.now();
    const waiter = waitAny(waiters, keys, Math.min(deadline, now + RECHECK_MS), now, signal);
    let done: number[];
    try {
      done = await settled();
    } catch (err) {
      waiter.cancel();
      throw err;
    }
    if (done.length > 0 || clock.now() >= deadline || signal?.aborted) {
      waiter.cancel();
      return done;
    }
    await waiter.woken;
  }
}
