import type { Broker } from "../contract/broker.js";
import type { Logger } from "../contract/logger.js";
import type { QueueEventBus } from "./events.js";
import type { MetricsRecorder } from "./metrics-recorder.js";
import type { KeepJobs } from "./retention.js";
import type { Serializer } from "./serializer.js";
import type { EnqueueOptions, Middleware, TaskHandler, TaskOptions } from "./types.js";

/** A registered task. */
export interface RegisteredTask {
  name: string;
  handler: TaskHandler;
  options: TaskOptions;
  /** `options.rateLimit` parsed. */
  rate?: { limit: number; intervalMs: number };
}

/** What a Queue shares with its workers, enqueuer and inspectors. */
export interface QueueCore {
  broker(): Promise<Broker>;
  /** The broker once it is open (saves an enqueue the wait for it). */
  openBroker(): Broker | undefined;
  readonly serializer: Serializer;
  readonly namespace: string | undefined;
  readonly events: QueueEventBus;
  readonly middleware: Middleware[];
  readonly tasks: Map<string, RegisteredTask>;
  /** Default retention of completed and cancelled jobs. */
  readonly resultTtlMs: number;
  /** The queue's `keepCompleted` and `keepDead` (a task's own win). */
  readonly keepCompleted: KeepJobs | undefined;
  readonly keepDead: KeepJobs | undefined;
  /** The workers' default lease on a claimed job (`QueueOptions.leaseMs`). */
  readonly leaseMs: number;
  readonly logger: Logger;
  /** Bumped on every task registration (workers rebuild their claim gates). */
  tasksVersion: number;
  enqueue(task: string, args: unknown[], options: EnqueueOptions): Promise<string>;
  /** Counts settled jobs into the broker's per-minute metrics. */
  readonly metrics: MetricsRecorder;
}
