import { AsyncLocalStorage } from "node:async_hooks";
import { QueueError } from "./errors.js";

/** What a running handler knows of its job (`currentJob()`). */
export interface JobContext {
  jobId: string;
  taskName: string;
  queue: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** Aborts on cancellation (`requestCancel`) and on timeout; the reason says which. */
  signal: AbortSignal;
  /** Records progress (0..100) on the job; resolves once stored. */
  setProgress(percent: number): Promise<void>;
  // --- job logs, progress events and flows ---
  /**
   * Appends a line (at most 4096 UTF-8 bytes) to the job's log, read with `queue.getJobLogs(id)`.
   * A job keeps its latest 1000 lines.
   */
  log(text: string): Promise<void>;
  /** Records progress (0..100) on the job and emits `job.progress` (`{ jobId, progress }`). */
  updateProgress(progress: number): Promise<void>;
  /** In a flow's parent: the results of its completed children, keyed by child id. */
  childResults<R = unknown>(): Promise<Record<string, R>>;
  /** In a flow's parent: the errors of its children that died or were cancelled, keyed by child id. */
  childFailures(): Promise<Record<string, string>>;
}

const storage = new AsyncLocalStorage<JobContext>();

/** Runs `fn` with `ctx` as the current job. */
export function runInJob<T>(ctx: JobContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

/** The job the calling handler runs for. Throws `QueueError` outside a handler. */
export function currentJob(): JobContext {
  const ctx = storage.getStore();
  if (!ctx) throw new QueueError("currentJob() called outside a task handler");
  return ctx;
}
