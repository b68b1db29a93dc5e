import type { Waiter, Waiters } from "./waiters.js";

/**
 * Parks on several keys of one `Waiters` at once: resolves `true` when any of them is notified,
 * `false` at the deadline or on abort. Every registration is dropped when it resolves. With no key
 * at all nothing can wake it, so only the deadline or an abort ends it.
 */
export function waitAny(
  waiters: Waiters,
  keys: readonly string[],
  deadline: number,
  now: number,
  signal?: AbortSignal,
): Waiter {
  if (keys.length === 0) return deadlineOnly(deadline, now, signal);
  // One abort listener for all the keys (one each made Node warn of a listener leak past ten).
  const parked = keys.map((k) => waiters.wait(k, deadline, now));
  const onAbort = () => cancel();
  const cancel = () => {
    signal?.removeEventListener("abort", onAbort);
    for (const w of parked) w.cancel();
  };
  if (signal?.aborted) cancel();
  else signal?.addEventListener("abort", onAbort, { once: true });
  const woken = Promise.race(parked.map((w) => w.woken)).finally(cancel);
  return { woken, cancel };
}

/** A waiter that only the deadline, an abort or `cancel` ends (all three resolve `false`). */
function deadlineOnly(deadline: number, now: number, signal?: AbortSignal): Waiter {
  let end: () => void = () => {};
  const woken = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => end(), Math.max(0, deadline - now));
    const onAbort = () => end();
    end = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(false);
    };
    if (signal?.aborted) end();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
  return { woken, cancel: () => end() };
}
