import type { Waiter, Waiters } from "./waiters.js";

/**
 * Parks on several keys of one `Waiters` at once: resolves `true` when any of them is notified,
 * `false` at the deadline or on abort. Every registration is dropped when it resolves.
 */
export function waitAny(
  waiters: Waiters,
  keys: readonly string[],
  deadline: number,
  now: number,
  signal?: AbortSignal,
): Waiter {
  const parked = keys.map((k) => waiters.wait(k, deadline, now, signal));
  const cancel = () => {
    for (const w of parked) w.cancel();
  };
  const woken = Promise.race(parked.map((w) => w.woken)).finally(cancel);
  return { woken, cancel };
}
