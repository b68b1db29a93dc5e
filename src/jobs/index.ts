/**
 * The job face: tasks, workers, retries, priority, timeouts, rate limits, middleware, events and
 * results, over any mqlite `Broker`.
 * @module
 */
// The entry wires the default host (storage picked by location, the console's server); every other
// module of the job face knows only the Broker contract.
import { defaultJobHost } from "../job-host.js";
import { provideJobHost } from "./host.js";

provideJobHost(defaultJobHost);

export type { BackoffFunction, ExponentialBackoff, FixedBackoff, RetryBackoff } from "./backoff.js";
export { CborSerializer } from "./cbor.js";
export { currentJob, type JobContext } from "./context.js";
export type { Dashboard, DashboardOptions } from "./dashboard.js";
export type { DebounceFields, Duration } from "./debounce.js";
export {
  JobCancelledError,
  JobError,
  JobFailedError,
  JobNotFoundError,
  JobStateError,
  JobTimeoutError,
  NotesValidationError,
  QueueError,
  QueueFullError,
  ResultTimeoutError,
  SerializationError,
  TaskNotRegisteredError,
} from "./errors.js";
export {
  DEFAULT_DB_PATH,
  DEFAULT_RESULT_TTL_MS,
  type EnqueueItem,
  Queue,
  type TaskArgs,
  type TaskName,
} from "./queue.js";
export { type EventMeta, QueueEvents, type QueueEventsOptions } from "./queue-events.js";
export type { RateLimit } from "./rate-limit.js";
export type { KeepJobs } from "./retention.js";
export { SandboxCrashedError, SandboxLoadError } from "./sandbox/errors.js";
export { SANDBOX_IDLE_MS } from "./sandbox/pool.js";
export type { SandboxedHandler } from "./sandbox/target.js";
export { deserializeCall, JsonSerializer, type Serializer, serializeCall } from "./serializer.js";
export type * from "./topic-types.js";
export type * from "./types.js";
export { Worker } from "./worker.js";
