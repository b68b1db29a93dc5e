import type { MessageRecord } from "../contract/job-service.js";
import { PROP_METADATA, PROP_NOTES, statusOf } from "../contract/job-status.js";
import { MAX_DURATION_MS, MIN_LEASE_CAP_MS } from "../contract/limits.js";
import type { MessageState } from "../contract/types.js";
import { QueueError } from "./errors.js";
import { splitEngineQueue } from "./naming.js";
import type { DeadJob, Job } from "./types.js";

/**
 * A job's message stores its timeout plus this margin as its own lease; workers cap every claim and
 * renewal at their `leaseMs`, so only a job whose timeout is shorter than that is leased this long.
 */
export const LEASE_GRACE_MS = 1000;
export const DEFAULT_TIMEOUT_MS = 300_000;
/** How long a worker's claim holds a job between two renewals by default: a dead worker's job runs again after this. */
export const DEFAULT_LEASE_MS = 30_000;

/** A `leaseMs` option: an integer from the broker's shortest lease cap to ten years (else a `QueueError`). */
export function leaseMsOf(value: unknown): number {
  if (
    typeof value !== "number" ||
    !Number.isInteger(value) ||
    value < MIN_LEASE_CAP_MS ||
    value > MAX_DURATION_MS
  ) {
    throw new QueueError(`leaseMs must be an integer from ${MIN_LEASE_CAP_MS} to ${MAX_DURATION_MS} ms`);
  }
  return value;
}
export const DEFAULT_MAX_RETRIES = 3;
// The job-status rules the console shares live in the contract.
export {
  DEFAULT_RESULT_TTL_MS,
  PROP_METADATA,
  PROP_NOTES,
  statesOf,
  statusOf,
} from "../contract/job-status.js";
/** A job's own result retention (ms), set by a publish's `resultTtlMs`. */
export const PROP_RESULT_TTL = "result_ttl_ms";

export function timeoutOf(lockDurationMs: number | undefined): number {
  return lockDurationMs && lockDurationMs > LEASE_GRACE_MS
    ? lockDurationMs - LEASE_GRACE_MS
    : DEFAULT_TIMEOUT_MS;
}

export function maxRetriesOf(maxDeliveryCount: number | undefined): number {
  return maxDeliveryCount && maxDeliveryCount > 0 ? maxDeliveryCount - 1 : DEFAULT_MAX_RETRIES;
}

/** Failed attempts before the current (or last) one. */
function retryCountOf(state: MessageState, deliveryCount: number): number {
  const finishedOrRunning = state === "locked" || state === "completed" || state === "dead_lettered";
  return Math.max(0, finishedOrRunning ? deliveryCount - 1 : deliveryCount);
}

/** A message record seen as a job. */
export function jobFromRecord(r: MessageRecord): Job {
  const { namespace, queue } = splitEngineQueue(r.queue);
  const job: Job = {
    id: String(r.seqNumber),
    queue,
    taskName: r.subject ?? "",
    status: statusOf(r.state, r.deliveryCount),
    priority: r.priority ?? 0,
    retryCount: retryCountOf(r.state, r.deliveryCount),
    maxRetries: maxRetriesOf(r.maxDeliveryCount),
    createdAt: r.enqueuedAt,
    scheduledAt: r.visibleAt ?? r.enqueuedAt,
    timeoutMs: timeoutOf(r.lockDurationMs),
  };
  if (r.progress !== undefined) job.progress = r.progress;
  if (r.result !== undefined) job.result = r.result;
  if (r.lastError !== undefined) job.error = r.lastError;
  if (r.deliveredAt !== undefined) job.startedAt = r.deliveredAt;
  if (r.settledAt !== undefined) job.completedAt = r.settledAt;
  if (r.uniqueKey !== undefined) job.uniqueKey = r.uniqueKey;
  const metadata = r.properties?.[PROP_METADATA];
  if (metadata !== undefined) job.metadata = metadata;
  const notes = r.properties?.[PROP_NOTES];
  if (notes !== undefined) job.notes = notes;
  if (namespace !== undefined) job.namespace = namespace;
  return job;
}

export function deadJobFromRecord(r: MessageRecord): DeadJob {
  const job = jobFromRecord(r);
  const dead: DeadJob = {
    id: job.id,
    originalJobId: job.id,
    queue: job.queue,
    taskName: job.taskName,
    retryCount: job.retryCount,
    failedAt: r.settledAt ?? r.enqueuedAt,
    dlqRetryCount: r.redriveCount ?? 0,
  };
  const error = job.error ?? r.deadLetterDescription;
  if (error !== undefined) dead.error = error;
  if (job.metadata !== undefined) dead.metadata = job.metadata;
  if (job.notes !== undefined) dead.notes = job.notes;
  return dead;
}

/** The sequence number of a job id, or undefined for an id that cannot be one. */
export function seqOf(id: string): number | undefined {
  if (!/^[1-9]\d{0,15}$/.test(id)) return undefined;
  const n = Number(id);
  return Number.isSafeInteger(n) ? n : undefined;
}
