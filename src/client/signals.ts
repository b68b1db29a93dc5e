/**
 * A signal that aborts when any input does; `release` detaches it from the inputs, so a long-lived
 * input (the client's own close signal) does not collect one listener per call.
 */
export function anySignal(signals: AbortSignal[]): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  for (const s of signals) {
    if (s.aborted) controller.abort();
    else s.addEventListener("abort", abort, { once: true });
  }
  return {
    signal: controller.signal,
    release: () => {
      for (const s of signals) s.removeEventListener("abort", abort);
    },
  };
}
