import type { PlainClaim, Take, Waiter, Waiters } from "./waiters.js";

/**
 * Parks on several keys of one `Waiters` at once: resolves `true` when any of them is notified,
 * `false` at the deadline or on abort. Every registration is dropped when it resolves. With no key
 * at all nothing can wake it, so only the deadline or an abort ends it. `plain` serves one key only:
 * a sender holding one key's registration could not keep the others from waking the waiter.
 */
export function waitAny<T>(
  waiters: Waiters<T>,
  keys: readonly string[],
  deadline: number,
  now: number,
  signal?: AbortSignal,
  take?: Take<T>,
  plain?: () => PlainClaim | undefined,
): Waiter<T> {
  if (keys.length === 0) return deadlineOnly(deadline, now, signal);
  // One key (a worker of one queue): the waiter itself, without a race of one.
  if (keys.length === 1) return waiters.wait(keys[0]!, deadline, now, signal, take, plain);
  // One take for all the keys: the first hand-off wins, later ones (other keys, same waiter) get none.
  // So it takes from every key at once, unbounded: a hand-off's budget counts one key's rows.
  let took = false;
  const once: Take<T> | undefined =
    take &&
    ((ctx, at) => {
      if (took) return [];
      const items = take(ctx, at, Number.POSITIVE_INFINITY);
      if (items.length > 0) {
        took = true;
        ctx.afterRollback(() => {
          took = false;
        });
      }
      return items;
    });
  // One abort listener for all the keys (one each made Node warn of a listener leak past ten).
  const parked = keys.map((k) => waiters.wait(k, deadline, now, undefined, once));
  const onAbort = () => cancel();
  const cancel = () => {
    signal?.removeEventListener("abort", onAbort);
    for (const w of parked) w.cancel();
  };
  if (signal?.aborted) cancel();
  else signal?.addEventListener("abort", onAbort, { once: true });
  const woken = Promise.race(parked.map((w) => w.woken)).finally(cancel);
  const taken = () => {
    for (const w of parked) {
      const items = w.taken();
      if (items) return items;
    }
    return undefined;
  };
  return { woken, taken, cancel };
}

/** A waiter that only the deadline, an abort or `cancel` ends (all three resolve `false`). */
function deadlineOnly<T>(deadline: number, now: number, signal?: AbortSignal): Waiter<T> {
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
  return { woken, taken: () => undefined, cancel: () => end() };
}
