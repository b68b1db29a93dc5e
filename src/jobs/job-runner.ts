import type { Broker } from "../contract/broker.js";
import { LockLostError } from "../contract/errors.js";
import type { CompleteItem, Message } from "../contract/types.js";
import { backoffDelay } from "./backoff.js";
import { runInJob } from "./context.js";
import type { QueueCore } from "./core.js";
import { JobCancelledError, JobTimeoutError, SerializationError, TaskNotRegisteredError } from "./errors.js";
import { isFlowChild, releaseParent } from "./flows.js";
import { HandlerContext } from "./handler-context.js";
import {
  DEFAULT_MAX_RETRIES,
  maxRetriesOf,
  PROP_METADATA,
  PROP_RESULT_TTL,
  timeoutOf,
} from "./job-record.js";
import { splitEngineQueue } from "./naming.js";
import { abortJob, type RunningJob } from "./running-job.js";
import { deserializeCall } from "./serializer.js";
import type { OutcomeEvent, TaskContext } from "./types.js";

type Attempt =
  | { ok: true; value: unknown }
  | { ok: false; error: unknown; timedOut: boolean; alwaysRetry: boolean };

/** The error text kept for a failed attempt: canonical JSON `{"errtype","message","traceback"}`. */
export function errorText(err: unknown): string {
  const e = err instanceof Error ? err : new Error(String(err));
  return JSON.stringify({ errtype: e.name, message: e.message, traceback: e.stack ?? "" });
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/**
 * Runs one claimed job: decode, middleware, the handler under its timeout and signal, then the
 * outcome (complete, retry with backoff, dead-letter, or cancelled) through the broker, then the
 * outcome hooks and events.
 */
/** Where completions go: the worker coalesces them into one `completeBatch` per queue and tick. */
export interface CompletionSink {
  complete(queue: string, item: CompleteItem): Promise<void>;
}

export class JobRunner {
  constructor(
    private readonly core: QueueCore,
    private readonly broker: Broker,
    private readonly completions: CompletionSink,
  ) {}

  /**
   * Runs the job. `handlerDone` is called as soon as the handler is over, before the outcome is
   * stored: the worker's next claim then joins the outcome's group commit.
   */
  async run(m: Message, job: RunningJob, handlerDone: () => void): Promise<void> {
    const taskName = m.subject ?? "";
    const started = performance.now();
    const jobId = String(m.seqNumber);
    const queue = splitEngineQueue(job.queue).queue;
    if (this.core.events.has("job.started"))
      this.core.events.emit("job.started", { jobId, taskName, queue, attempt: m.deliveryCount });
    const attempt = await this.attempt(m, job, taskName, queue);
    handlerDone();
    const task = this.core.tasks.get(taskName);
    const ownTtl = m.properties?.[PROP_RESULT_TTL];
    const retainMs =
      ownTtl !== undefined && /^\d+$/.test(ownTtl)
        ? Number(ownTtl)
        : (task?.options.resultTtlMs ?? this.core.resultTtlMs);
    const event = (extra: Partial<OutcomeEvent> = {}): OutcomeEvent => ({
      jobId,
      taskName,
      queue,
      retryCount: m.deliveryCount - 1,
      durationMs: performance.now() - started,
      ...extra,
    });
    try {
      if (job.abortReason instanceof LockLostError) {
        // The lease lapsed and the job went back to the queue (it runs again, or already did,
        // elsewhere): this attempt has no outcome to store, and the fence would refuse one.
        this.core.logger.warn({ jobId, taskName }, "a job's lease was lost; its outcome is not stored");
        return;
      }
      if (job.cancelRequested) {
        await this.broker.cancelMessage(job.queue, job.seq, { lockToken: job.lockToken, retainMs });
        this.outcome("job.cancelled", "onCancel", event());
        return;
      }
      if (attempt.ok) {
        let result: Uint8Array | undefined;
        try {
          result = retainMs > 0 ? this.core.serializer.serialize(attempt.value) : undefined;
        } catch (err) {
          await this.fail(
            m,
            job,
            taskName,
            { ok: false, error: err, timedOut: false, alwaysRetry: false },
            event,
          );
          return;
        }
        const item: CompleteItem = { seqNumber: job.seq, lockToken: job.lockToken };
        if (retainMs > 0) {
          item.retainMs = retainMs;
          if (result !== undefined) item.result = result;
        }
        await this.completions.complete(job.queue, item);
        this.outcome("job.completed", "onCompleted", event(), job.queue);
        return;
      }
      await this.fail(m, job, taskName, attempt, event);
    } catch (err) {
      // Typically lock_lost: the lease lapsed and the job went back to the queue; it runs again.
      this.core.logger.warn({ jobId, taskName, err: String(err) }, "could not store a job's outcome");
    } finally {
      if (isFlowChild(m)) await releaseParent(this.core, this.broker, job.seq);
    }
  }

  private async attempt(m: Message, job: RunningJob, taskName: string, queue: string): Promise<Attempt> {
    const task = this.core.tasks.get(taskName);
    if (!task)
      return { ok: false, error: new TaskNotRegisteredError(taskName), timedOut: false, alwaysRetry: false };
    let list: unknown[];
    try {
      list = deserializeCall(this.core.serializer, m.body);
    } catch (err) {
      const error =
        err instanceof SerializationError ? err : new SerializationError(String(err), { cause: err });
      return { ok: false, error, timedOut: false, alwaysRetry: true };
    }
    const timeoutMs = timeoutOf(m.lockDurationMs);
    const jobCtx = new HandlerContext(this.core, this.broker, job, m, queue);
    const ctx: TaskContext = { jobId: jobCtx.jobId, taskName, args: list, attempt: m.deliveryCount };
    const metadata = m.properties?.[PROP_METADATA];
    if (metadata !== undefined) ctx.metadata = metadata;
    const middleware = this.core.middleware;
    const startedAt = performance.now();
    if (middleware.length === 0) {
      // Without middleware, a handler that returns a plain value (a synchronous one) is done: it
      // cannot time out, as the timer could only fire after it returned. No timer, no race.
      let value: unknown;
      try {
        value = runInJob(jobCtx, () => task.handler(...list));
      } catch (error) {
        return failedAttempt(error);
      }
      if (!isThenable(value)) return { ok: true, value };
      return this.raceTimeout(job, timeoutMs, startedAt, value, ctx);
    }
    const body = async () => {
      for (const mw of middleware) if (mw.before) await mw.before(ctx);
      const value = await runInJob(jobCtx, () => task.handler(...list));
      for (const mw of middleware) if (mw.after) await mw.after(ctx, value);
      return value;
    };
    return this.raceTimeout(job, timeoutMs, startedAt, body(), ctx);
  }

  /**
   * Settles the attempt with `work`, or with a `JobTimeoutError` (aborting the job) once `timeoutMs`
   * have passed since `startedAt` (the handler's synchronous start counts).
   */
  private async raceTimeout(
    job: RunningJob,
    timeoutMs: number,
    startedAt: number,
    work: PromiseLike<unknown>,
    ctx: TaskContext,
  ): Promise<Attempt> {
    const middleware = this.core.middleware;
    let timer: NodeJS.Timeout | undefined;
    const left = Math.max(0, timeoutMs - (performance.now() - startedAt));
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new JobTimeoutError(timeoutMs);
        abortJob(job, err);
        reject(err);
      }, left);
    });
    try {
      return { ok: true, value: await Promise.race([work, timeout]) };
    } catch (error) {
      for (const mw of middleware) {
        if (!mw.onError) continue;
        try {
          await mw.onError(ctx, error);
        } catch {
          // the attempt already failed; a failing hook does not change that
        }
      }
      return failedAttempt(error);
    } finally {
      clearTimeout(timer);
    }
  }

  private async fail(
    m: Message,
    job: RunningJob,
    taskName: string,
    attempt: Extract<Attempt, { ok: false }>,
    event: (extra?: Partial<OutcomeEvent>) => OutcomeEvent,
  ): Promise<void> {
    const text = errorText(attempt.error);
    const message = errorMessage(attempt.error);
    if (this.core.events.has("job.failed")) {
      this.core.events.emit("job.failed", event({ error: message, timedOut: attempt.timedOut }));
    }
    const maxDeliveries = (m.maxDeliveryCount ?? 0) > 0 ? m.maxDeliveryCount! : DEFAULT_MAX_RETRIES + 1;
    const task = this.core.tasks.get(taskName);
    let retryable = attempt.alwaysRetry;
    if (!retryable) {
      try {
        retryable = task?.options.retryOn ? task.options.retryOn(attempt.error) !== false : true;
      } catch {
        retryable = true;
      }
    }
    if (retryable && m.deliveryCount < maxDeliveries) {
      const delayMs = backoffDelay(task?.options.retryBackoff, m.deliveryCount, attempt.error, (problem) =>
        this.core.logger.warn(
          { jobId: String(m.seqNumber), taskName },
          `${problem}; the default backoff applies`,
        ),
      );
      await this.broker.abandon(job.queue, job.seq, job.lockToken, { delayMs, error: text });
      this.outcome("job.retrying", "onRetry", event({ error: message, timedOut: attempt.timedOut }));
      return;
    }
    await this.broker.reject(job.queue, job.seq, job.lockToken, {
      reason: retryable ? "RetriesExhausted" : "NotRetryable",
      description: message.slice(0, 4096),
      error: text,
    });
    this.outcome(
      "job.dead",
      "onDeadLetter",
      event({ error: message, timedOut: attempt.timedOut, retryCount: maxRetriesOf(m.maxDeliveryCount) }),
      job.queue,
    );
  }

  /** Emits the event and calls the outcome hook of every middleware (not awaited; errors dropped). */
  private outcome(
    name: "job.completed" | "job.retrying" | "job.dead" | "job.cancelled",
    hook: "onCompleted" | "onRetry" | "onDeadLetter" | "onCancel",
    payload: OutcomeEvent,
    queue?: string,
  ): void {
    // The one place a settled job is counted in the metrics (its outcome is stored by now).
    if (queue !== undefined && (name === "job.completed" || name === "job.dead"))
      this.core.metrics.count(queue, name === "job.completed" ? "completed" : "failed");
    this.core.events.emit(name, payload);
    for (const mw of this.core.middleware) {
      const fn = mw[hook];
      if (!fn) continue;
      try {
        const r = fn.call(mw, payload) as unknown;
        if (r instanceof Promise) r.catch(() => {});
      } catch {
        // outcome hooks observe; they cannot change the outcome
      }
    }
  }
}

/** A failed attempt: a timeout is always retried. */
function failedAttempt(error: unknown): Attempt {
  const timedOut = error instanceof JobTimeoutError;
  return { ok: false, error, timedOut, alwaysRetry: timedOut };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/** The abort reason of a cancelled job's signal. */
export function cancelReason(jobId: string): JobCancelledError {
  return new JobCancelledError(jobId);
}
