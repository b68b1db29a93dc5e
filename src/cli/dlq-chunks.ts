import type { Broker } from "../contract/broker.js";
import { Progress } from "./output/progress.js";

/** Dead letters moved or purged per call when a progress bar is drawn. */
export const DLQ_CHUNK = 1000;

/**
 * Runs a redrive or purge of up to `max` dead letters (0 = all). Piped, or on a small DLQ, it is
 * one call (one transaction, as the original). On a terminal with more than one chunk to do, it
 * runs chunk by chunk (each one atomic, oldest first) and draws a progress bar.
 */
export async function inChunks(
  broker: Broker,
  queue: string,
  label: string,
  max: number,
  step: (max: number) => Promise<number>,
): Promise<number> {
  if (!process.stderr.isTTY) return step(max);
  const dead = (await broker.stats(queue)).deadLettered;
  const total = max > 0 ? Math.min(max, dead) : dead;
  if (total <= DLQ_CHUNK) return step(max);
  const progress = new Progress(label, total);
  let done = 0;
  try {
    for (;;) {
      const want = max > 0 ? Math.min(DLQ_CHUNK, max - done) : DLQ_CHUNK;
      if (want <= 0) break;
      const n = await step(want);
      done += n;
      progress.add(n);
      if (n < want) break;
    }
  } finally {
    progress.finish();
  }
  return done;
}
