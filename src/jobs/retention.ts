import type { Broker } from "../contract/broker.js";
import { MAX_DURATION_MS, MAX_KEEP_NEWEST } from "../contract/limits.js";
import type { MessageState } from "../contract/types.js";
import type { QueueCore } from "./core.js";
import { QueueError } from "./errors.js";

/**
 * How many finished jobs of a task to keep, and for how long: a job beyond the newest `count` (per
 * task and queue), or finished more than `ageMs` ago, is deleted. Either bound may be left out.
 */
export interface KeepJobs {
  /** Keep at most this many (0..1000000), the most recently finished. */
  count?: number;
  /** Keep none finished longer ago than this (ms). */
  ageMs?: number;
}

/** How often a queue with running workers applies `keepCompleted` and `keepDead`. */
export const RETENTION_SWEEP_MS = 5000;

/** Refuses a `keepCompleted` / `keepDead` that is not `{ count?, ageMs? }` with sane numbers. */
export function validateKeep(keep: KeepJobs | undefined, name: string): void {
  if (keep === undefined) return;
  if (typeof keep !== "object" || keep === null) throw new QueueError(`${name} must be { count?, ageMs? }`);
  for (const key of Object.keys(keep)) {
    if (key !== "count" && key !== "ageMs") throw new QueueError(`${name} has an unknown field "${key}"`);
  }
  const { count, ageMs } = keep;
  if (count === undefined && ageMs === undefined) throw new QueueError(`${name} needs count, ageMs or both`);
  if (count !== undefined && (!Number.isSafeInteger(count) || count < 0 || count > MAX_KEEP_NEWEST))
    throw new QueueError(`${name}.count must be a whole number from 0 to ${MAX_KEEP_NEWEST}`);
  if (ageMs !== undefined && (!Number.isFinite(ageMs) || ageMs < 0 || ageMs > MAX_DURATION_MS))
    throw new QueueError(`${name}.ageMs must be a number of ms, 0 or more (at most ten years)`);
}

/** Deletes the jobs of one task and state beyond its bounds, in one engine queue. Returns how many. */
async function trim(broker: Broker, queue: string, task: string, state: MessageState, keep: KeepJobs) {
  let n = 0;
  const base = { states: [state], subject: task };
  if (keep.count !== undefined) n += await broker.deleteSettled(queue, { ...base, keepNewest: keep.count });
  if (keep.ageMs !== undefined)
    n += await broker.deleteSettled(queue, { ...base, olderThanMs: Math.round(keep.ageMs) });
  return n;
}

/** Whether any registered task has a `keepCompleted` or `keepDead` (its own or the queue's). */
export function hasRetention(core: QueueCore): boolean {
  if (core.keepCompleted || core.keepDead) return core.tasks.size > 0;
  for (const task of core.tasks.values())
    if (task.options.keepCompleted || task.options.keepDead) return true;
  return false;
}

/**
 * Applies `keepCompleted` and `keepDead` (each task's own, else the queue's) to the registered
 * tasks' jobs in the given engine queues. Returns how many jobs it deleted.
 */
export async function applyRetention(core: QueueCore, queues: string[]): Promise<number> {
  const broker = await core.broker();
  let n = 0;
  for (const task of core.tasks.values()) {
    const completed = task.options.keepCompleted ?? core.keepCompleted;
    const dead = task.options.keepDead ?? core.keepDead;
    if (!completed && !dead) continue;
    for (const queue of queues) {
      if (completed) n += await trim(broker, queue, task.name, "completed", completed);
      if (dead) n += await trim(broker, queue, task.name, "dead_lettered", dead);
    }
  }
  return n;
}

/** Runs `sweep` every `intervalMs` (one pass at a time) until the returned function is called. */
export function startRetentionSweep(
  core: QueueCore,
  sweep: () => Promise<unknown>,
  intervalMs = RETENTION_SWEEP_MS,
): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    sweep()
      .catch((err: unknown) => core.logger.warn({ err: String(err) }, "job retention sweep failed"))
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
