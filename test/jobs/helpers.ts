import { Queue } from "../../src/jobs/index.js";
import type { QueueOptions } from "../../src/jobs/types.js";
import { tempDir } from "../support/temp.js";

/** A queue on a fresh file; `cleanup` closes it and removes the folder. */
export function tempQueue(options: QueueOptions = {}): {
  queue: Queue;
  path: string;
  cleanup: () => Promise<void>;
} {
  const tmp = tempDir("mqlite-jobs-");
  const path = tmp.file("jobs.db");
  const queue = new Queue({ dbPath: path, ...options });
  return {
    queue,
    path,
    cleanup: async () => {
      await queue.close();
      tmp.cleanup();
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it is truthy (or fails after `timeoutMs`). */
export async function eventually<T>(
  check: () => Promise<T> | T,
  timeoutMs = 5000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}
