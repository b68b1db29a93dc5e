import type { Broker } from "../contract/broker.js";
import type { Message } from "../contract/types.js";
import type { JobContext } from "./context.js";
import type { QueueCore } from "./core.js";
import { QueueError } from "./errors.js";
import { childFailures, childResults } from "./flows.js";
import { type RunningJob, signalOf } from "./running-job.js";

/**
 * What `currentJob()` gives a running handler. One object per job, made for every job while most
 * handlers call none of its methods: the methods are made on first read (a getter returns the
 * method bound to its job, so `const { log } = currentJob()` works as a plain method call does).
 * The object of closures it replaces cost every job seven functions and two spreads.
 */
export class HandlerContext implements JobContext {
  readonly jobId: string;
  readonly taskName: string;
  /** The job's queue as the application names it. */
  readonly queue: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  // Private (#): a handler that logs or serializes its context sees the job's fields, not these.
  readonly #core: QueueCore;
  readonly #broker: Broker;
  readonly #job: RunningJob;

  constructor(core: QueueCore, broker: Broker, job: RunningJob, message: Message, queue: string) {
    this.jobId = String(message.seqNumber);
    this.taskName = message.subject ?? "";
    this.queue = queue;
    this.attempt = message.deliveryCount;
    this.#core = core;
    this.#broker = broker;
    this.#job = job;
  }

  get signal(): AbortSignal {
    return signalOf(this.#job);
  }

  /** FlexiQ's name: clamps rather than refuses, and reports like `updateProgress`. */
  get setProgress(): (percent: number) => Promise<void> {
    return (percent) => this.storeProgress(Math.round(Math.min(100, Math.max(0, percent))));
  }

  get updateProgress(): (progress: number) => Promise<void> {
    return async (progress) => {
      if (typeof progress !== "number" || !Number.isFinite(progress) || progress < 0 || progress > 100)
        throw new QueueError("progress must be a number within 0..100");
      await this.storeProgress(Math.round(progress));
    };
  }

  get log(): (text: string) => Promise<void> {
    return async (text) => {
      if (typeof text !== "string") throw new QueueError("a log line must be a string");
      const { queue, seq, lockToken } = this.#job;
      await this.#broker.appendMessageLog(queue, seq, lockToken, [text]);
    };
  }

  get childResults(): <R = unknown>() => Promise<Record<string, R>> {
    return () => childResults(this.#core, this.#broker, this.#job.seq);
  }

  get childFailures(): () => Promise<Record<string, string>> {
    return () => childFailures(this.#broker, this.#job.seq);
  }

  private async storeProgress(value: number): Promise<void> {
    const { queue, seq, lockToken } = this.#job;
    await this.#broker.setProgress(queue, seq, lockToken, value);
    this.#core.events.emit("job.progress", {
      jobId: this.jobId,
      progress: value,
      taskName: this.taskName,
      queue: this.queue,
    });
  }
}
