import type { MessageState } from "./types.js";

// How a job (a message of a task queue) is seen: shared by the job face and the console.

/** The state of a job. `failed` is a job waiting out its backoff after a failed attempt. */
export type JobStatus = "pending" | "running" | "complete" | "failed" | "dead" | "cancelled";

/** Completed and cancelled jobs are kept this long by default. */
export const DEFAULT_RESULT_TTL_MS = 24 * 3600 * 1000;

/** Message property keys of the job fields that have no column of their own. */
export const PROP_METADATA = "metadata";
export const PROP_NOTES = "notes";

/** A job's status from its message's state (a scheduled message that was delivered before is backing off: `failed`). */
export function statusOf(state: MessageState | undefined, deliveryCount: number): JobStatus {
  switch (state) {
    case "locked":
      return "running";
    case "completed":
      return "complete";
    case "dead_lettered":
      return "dead";
    case "cancelled":
      return "cancelled";
    case "scheduled":
      return deliveryCount > 0 ? "failed" : "pending";
    default:
      return "pending";
  }
}

/** The message states (and backoff flag) of a status filter. */
export function statesOf(status: JobStatus | "completed"): { states: MessageState[]; backingOff?: boolean } {
  switch (status) {
    case "pending":
      return { states: ["active", "scheduled", "deferred"], backingOff: false };
    case "failed":
      return { states: ["scheduled"], backingOff: true };
    case "running":
      return { states: ["locked"] };
    case "complete":
    case "completed":
      return { states: ["completed"] };
    case "dead":
      return { states: ["dead_lettered"] };
    case "cancelled":
      return { states: ["cancelled"] };
  }
}
