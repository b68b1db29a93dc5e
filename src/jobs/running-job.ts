/** A job this worker is running. */
export interface RunningJob {
  seq: number;
  queue: string;
  lockToken: string;
  /** Created when the handler first reads its signal (most never do). */
  controller: AbortController | undefined;
  /** Why the job was aborted before its signal existed (the signal is born aborted). */
  abortReason: unknown;
  cancelRequested: boolean;
}

/** The job's signal, created on first use. */
export function signalOf(job: RunningJob): AbortSignal {
  if (!job.controller) {
    job.controller = new AbortController();
    if (job.abortReason !== undefined) job.controller.abort(job.abortReason);
  }
  return job.controller.signal;
}

/** Aborts the job's signal (now, or at its creation). */
export function abortJob(job: RunningJob, reason: unknown): void {
  if (job.abortReason !== undefined) return;
  job.abortReason = reason;
  job.controller?.abort(reason);
}
