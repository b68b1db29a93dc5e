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

export { eventually, sleep } from "../support/eventually.js";
