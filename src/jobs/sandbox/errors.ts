import { JobError } from "../errors.js";

/**
 * A sandboxed handler's process ended while it ran a job: `process.exit`, an uncaught exception or
 * unhandled rejection, a native crash or a kill. The attempt fails (and is retried by the task's
 * rules); a fresh process serves the next job.
 */
export class SandboxCrashedError extends JobError {
  readonly code = "sandbox_crashed";
  constructor(
    /** The process's exit code, or null when a signal ended it. */
    readonly exitCode: number | null,
    /** The signal that ended it (`SIGABRT`, `SIGSEGV`, `SIGKILL`…), or null. */
    readonly signal: NodeJS.Signals | null,
    /** What the process reported before it died (an uncaught error), when it could. */
    readonly detail?: string,
  ) {
    const how = signal ? `was killed by ${signal}` : `exited with code ${exitCode}`;
    super(`the sandbox process ${how} during the job${detail ? `: ${detail}` : ""}`);
  }
}

/** A sandboxed handler's file could not be loaded, or it has no function under the export named. */
export class SandboxLoadError extends JobError {
  readonly code = "sandbox_load_failed";
}
