import type { Logger } from "../contract/logger.js";
import type { LogConsumer, Topics } from "./topics.js";

function wait(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    timer.unref?.();
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * One managed log consumer's loop: read up to `batchSize` after the cursor, run the handler on each
 * message in order, and move the cursor past what was processed. An empty read waits the poll
 * interval; a batch that made progress reads again at once. In `retry` mode the first failure ends
 * the batch (the messages before it are acked) and the loop waits before re-reading; in `skip`
 * mode a failure is logged and the cursor moves past it. Read and ack errors are logged and retried.
 */
export async function runLogConsumer(
  topics: Topics,
  c: LogConsumer,
  signal: AbortSignal,
  logger: Logger,
): Promise<void> {
  while (!signal.aborted) {
    let delay = c.pollIntervalMs;
    try {
      const batch = await topics.readRaw(c.topic, c.name, c.batchSize);
      if (batch.length > 0) {
        let last: number | undefined;
        let failed = false;
        for (const m of batch) {
          if (signal.aborted) break;
          try {
            const args = topics.decode(m).args;
            await c.handler(...args);
            last = m.id;
          } catch (err) {
            logger.warn(
              { topic: c.topic, subscription: c.name, id: m.id, err: String(err) },
              c.onError === "skip"
                ? "log consumer failed; skipping the message"
                : "log consumer failed; retrying",
            );
            if (c.onError === "skip") {
              last = m.id;
              continue;
            }
            failed = true;
            break;
          }
        }
        if (last !== undefined) await topics.ack(c.topic, c.name, last);
        if (!failed) delay = 0;
      }
    } catch (err) {
      if (signal.aborted) break;
      logger.warn({ topic: c.topic, subscription: c.name, err: String(err) }, "log consumer poll failed");
    }
    if (delay > 0) await wait(delay, signal);
    else await new Promise((r) => setImmediate(r));
  }
}
