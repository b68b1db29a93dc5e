import type { JobStatus } from "./types.js";

/**
 * The job face's named errors. Every one extends `JobError`, so `err instanceof JobError` tells a
 * job-face failure from a broker one (`MqliteError`), which passes through unchanged.
 */

/** Base class of every error the job face raises on purpose. */
export class JobError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A misuse of the queue: bad options, an unparseable rate limit or cron, a closed queue. */
export class QueueError extends JobError {}

/**
 * `enqueue` or `enqueueMany` would take a queue past its `maxPending` (see `configureQueue`):
 * `pending` jobs wait in `queue` already, and the cap is `cap`. Nothing was enqueued.
 */
export class QueueFullError extends QueueError {
  constructor(
    readonly queue: string,
    readonly pending: number,
    readonly cap: number,
  ) {
    super(`queue '${queue}' is full: ${pending} pending >= maxPending ${cap}`);
  }
}

/** A worker claimed a job whose task has no handler in its process. */
export class TaskNotRegisteredError extends JobError {
  constructor(readonly taskName: string) {
    super(`task "${taskName}" is not registered`);
  }
}

/** `result()` of a job that failed for good (dead-lettered). `error` is its last error. */
export class JobFailedError extends JobError {
  constructor(
    readonly jobId: string,
    readonly error?: string,
  ) {
    super(`job ${jobId} failed${error ? `: ${error}` : ""}`);
  }
}

/** `result()` of a cancelled job; also the abort reason of a running job's signal on cancel. */
export class JobCancelledError extends JobError {
  constructor(readonly jobId: string) {
    super(`job ${jobId} was cancelled`);
  }
}

/** `result()` gave up waiting. */
export class ResultTimeoutError extends JobError {
  constructor(readonly timeoutMs: number) {
    super(`no result within ${timeoutMs} ms`);
  }
}

/** An attempt ran past its `timeoutMs` (the abort reason of its signal, and its recorded error). */
export class JobTimeoutError extends JobError {
  constructor(readonly timeoutMs: number) {
    super(`attempt timed out after ${timeoutMs} ms`);
  }
}

/** The job does not exist (a wrong id, or its kept outcome was already deleted). Code `job_not_found`. */
export class JobNotFoundError extends JobError {
  readonly code = "job_not_found";
  constructor(readonly jobId: string) {
    super(`job ${jobId} not found`);
  }
}

/**
 * The job is not in a state that allows the request (`promote` of a job that is not delayed,
 * `removeJob` of a running job, `retryJob` of one that neither failed nor died). Code `job_state`;
 * `status` is the job's status when it was refused.
 */
export class JobStateError extends JobError {
  readonly code = "job_state";
  constructor(
    readonly jobId: string,
    readonly status: JobStatus,
    action: string,
  ) {
    super(`job ${jobId} is ${status}: cannot ${action} it`);
  }
}

/** `notes` broke a rule: a plain object, at most 15 top-level fields, at most 4 KiB encoded. */
export class NotesValidationError extends JobError {}

/** A payload or result could not be (de)serialized. */
export class SerializationError extends JobError {}
