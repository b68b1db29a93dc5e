import type { Broker } from "../contract/broker.js";
import { MAX_NAME_LIST } from "../contract/limits.js";
import { type Logger, stderrLogger } from "../contract/logger.js";
import { Admission } from "./admission.js";
import { validateBackoff } from "./backoff.js";
import type { QueueCore, RegisteredTask } from "./core.js";
import { type Dashboard, type DashboardOptions, startDashboard } from "./dashboard.js";
import { debounceRule } from "./debounce.js";
import { Enqueuer } from "./enqueuer.js";
import { QueueError } from "./errors.js";
import { EventRecorder } from "./event-recorder.js";
import { QueueEventBus } from "./events.js";
import { cancelFlow, enqueueFlow, startFlowSweep } from "./flows.js";
import { acquireBroker } from "./host.js";
import { Inspector } from "./inspector.js";
import { promoteJob, removeJob, retryJob } from "./job-actions.js";
import { DEFAULT_LEASE_MS, DEFAULT_RESULT_TTL_MS, leaseMsOf, seqOf } from "./job-record.js";
import { MetricsRecorder } from "./metrics-recorder.js";
import { engineQueue, inNamespace } from "./naming.js";
import { type PeriodicSchedule, PeriodicScheduler } from "./periodic.js";
import { parseRateLimit } from "./rate-limit.js";
import { peekResult, waitForResult } from "./results.js";
import { applyRetention, hasRetention, startRetentionSweep, validateKeep } from "./retention.js";
import { closeSandboxes, sandboxedTaskHandler } from "./sandbox/pool.js";
import { isSandboxedHandler, type SandboxedHandler } from "./sandbox/target.js";
import { JsonSerializer } from "./serializer.js";
import type {
  DeclaredTopic,
  LogConsumerOptions,
  PublishOptions,
  SubscriberOptions,
  Subscription,
  TopicLogStat,
  TopicMessage,
  TopicStat,
} from "./topic-types.js";
import { Topics } from "./topics.js";
import type {
  DeadJob,
  EnqueueOptions,
  FlowJob,
  FlowNodeIds,
  Job,
  JobAttemptError,
  JobFilter,
  JobLogs,
  JobMetrics,
  MetricsOptions,
  Middleware,
  PeriodicOptions,
  PeriodicScheduleOptions,
  PeriodicTask,
  QueueEventMap,
  QueueLimits,
  QueueOptions,
  Stats,
  TaskHandler,
  TaskOptions,
  WorkerRunOptions,
  WorkerStatus,
} from "./types.js";
import { Worker } from "./worker.js";

/** The default file of `new Queue()`. */
export const DEFAULT_DB_PATH = ".mqlite/jobs.db";
export { DEFAULT_RESULT_TTL_MS };

/** The task names `enqueue` accepts: the registered ones, or any string before any is registered. */
export type TaskName<T> = [keyof T] extends [never] ? string : keyof T & string;
/** The argument list of a registered task. */
export type TaskArgs<T, K> = K extends keyof T
  ? T[K] extends TaskHandler
    ? Parameters<T[K]>
    : unknown[]
  : unknown[];

/** One job of `enqueueMany`. */
export interface EnqueueItem<A extends unknown[] = unknown[]> {
  args?: A;
  options?: EnqueueOptions;
}

/**
 * A job queue over an mqlite broker: register tasks, enqueue jobs, run workers, read results.
 * A job is a message in its queue; everything here runs on any `Broker` (a file, memory, or a
 * served broker through `connect(url)`), so workers can run in other processes and on other machines.
 *
 * ```ts
 * const queue = new Queue({ dbPath: "jobs.db" }).task("add", (a: number, b: number) => a + b);
 * const worker = queue.runWorker();
 * const id = await queue.enqueue("add", [2, 3]);
 * console.log(await queue.result(id)); // 5
 * await queue.close();
 * ```
 */
export class Queue<T extends Record<string, TaskHandler> = Record<never, TaskHandler>> {
  private readonly core: QueueCore;
  private readonly enqueuer: Enqueuer;
  private readonly admission: Admission;
  private readonly inspector: Inspector;
  private readonly periodic: PeriodicScheduler;
  private readonly topics: Topics;
  private readonly workers = new Set<Worker>();
  private readonly brokerPromise: Promise<Broker>;
  private resolvedBroker: Broker | undefined;
  private readonly release: (() => Promise<void>) | undefined;
  private closing: Promise<void> | undefined;
  private readonly recorder: EventRecorder | undefined;
  private stopFlowSweep: (() => void) | undefined;
  private stopRetention: (() => void) | undefined;

  constructor(options: QueueOptions = {}) {
    // Checked before a broker is acquired: a refused option leaves nothing open.
    const leaseMs = options.leaseMs === undefined ? DEFAULT_LEASE_MS : leaseMsOf(options.leaseMs);
    const resultTtlMs = options.resultTtlMs ?? DEFAULT_RESULT_TTL_MS;
    if (!Number.isFinite(resultTtlMs) || resultTtlMs < 0)
      throw new QueueError("resultTtlMs must not be negative");
    validateKeep(options.keepCompleted, "keepCompleted");
    validateKeep(options.keepDead, "keepDead");
    if (options.broker) {
      this.brokerPromise = Promise.resolve(options.broker);
    } else {
      const location = options.dsn || options.dbPath || DEFAULT_DB_PATH;
      const pooled = acquireBroker(location, options.schema ? { schema: options.schema } : {});
      this.brokerPromise = pooled.broker;
      this.release = pooled.release;
    }
    this.brokerPromise.then(
      (b) => {
        this.resolvedBroker = b;
      },
      () => {},
    );
    const logger: Logger = stderrLogger;
    this.core = {
      broker: () => (this.resolvedBroker ? Promise.resolve(this.resolvedBroker) : this.brokerPromise),
      openBroker: () => this.resolvedBroker,
      serializer: options.serializer ?? new JsonSerializer(),
      namespace: options.namespace || undefined,
      events: new QueueEventBus(),
      middleware: [],
      tasks: new Map<string, RegisteredTask>(),
      resultTtlMs,
      keepCompleted: options.keepCompleted ? { ...options.keepCompleted } : undefined,
      keepDead: options.keepDead ? { ...options.keepDead } : undefined,
      leaseMs,
      logger,
      tasksVersion: 0,
      enqueue: (task, args, opts) => this.enqueueOne(task, args, opts),
      metrics: new MetricsRecorder(() => this.core.broker(), logger),
    };
    this.enqueuer = new Enqueuer(this.core);
    this.admission = new Admission(this.core);
    this.inspector = new Inspector(this.core);
    this.periodic = new PeriodicScheduler(this.core);
    this.topics = new Topics(this.core);
    if (options.recordEvents !== false) this.recorder = new EventRecorder(this.core);
  }

  /** The broker the queue runs on. */
  broker(): Promise<Broker> {
    return this.core.broker();
  }

  /** Serves the web console over this queue's broker: `const { url, close } = await queue.dashboard({ port })`. */
  async dashboard(options?: DashboardOptions): Promise<Dashboard> {
    return startDashboard(await this.core.broker(), options, {
      list: () => this.listPeriodic(),
      pause: (name) => this.pausePeriodic(name),
      resume: (name) => this.resumePeriodic(name),
    });
  }

  // --- tasks, middleware, events ------------------------------------------------------------------

  /**
   * Registers (or replaces) a task. Returns the queue, typed so `enqueue` knows the task's arguments.
   * The handler is a function, or `{ file }`: a module whose handler runs in a sandbox process.
   */
  task<N extends string, H extends TaskHandler>(
    name: N,
    handler: H | SandboxedHandler,
    options: TaskOptions = {},
  ): Queue<T & Record<N, H>> {
    if (typeof name !== "string" || name.length === 0) throw new QueueError("a task name is required");
    const run = isSandboxedHandler(handler) ? sandboxedTaskHandler(this.core, name, handler) : handler;
    if (typeof run !== "function") throw new QueueError(`task "${name}" needs a handler function`);
    for (const key of ["maxRetries", "timeoutMs", "maxConcurrent", "resultTtlMs"] as const) {
      const v = options[key];
      if (v !== undefined && (!Number.isFinite(v) || v < 0))
        throw new QueueError(`${key} must not be negative`);
    }
    if (options.maxConcurrent !== undefined && options.maxConcurrent < 1)
      throw new QueueError("maxConcurrent must be at least 1");
    validateBackoff(options.retryBackoff);
    validateKeep(options.keepCompleted, "keepCompleted");
    validateKeep(options.keepDead, "keepDead");
    const task: RegisteredTask = { name, handler: run, options: { ...options } };
    if (options.rateLimit !== undefined) task.rate = parseRateLimit(options.rateLimit);
    debounceRule(`task "${name}"`, options);
    this.core.tasks.set(name, task);
    this.core.tasksVersion++;
    return this as unknown as Queue<T & Record<N, H>>;
  }

  /** The registered task names, sorted. */
  registeredTasks(): string[] {
    return [...this.core.tasks.keys()].sort();
  }

  /** Adds middleware (run in registration order). */
  use(middleware: Middleware): this {
    this.core.middleware.push(middleware);
    return this;
  }

  /** Listens to an event (fired in this process: job outcomes of this queue's workers, enqueues, workers). */
  on<E extends keyof QueueEventMap>(event: E, listener: (payload: QueueEventMap[E]) => void): this {
    this.core.events.on(event, listener);
    return this;
  }

  off<E extends keyof QueueEventMap>(event: E, listener: (payload: QueueEventMap[E]) => void): this {
    this.core.events.off(event, listener);
    return this;
  }

  // --- enqueue --------------------------------------------------------------------------------------

  /** Enqueues one job; resolves with its id once stored. */
  enqueue<K extends TaskName<T>>(task: K, args?: TaskArgs<T, K>, options?: EnqueueOptions): Promise<string> {
    return this.enqueueOne(task, (args ?? []) as unknown[], options ?? {});
  }

  /**
   * Enqueues many jobs of one task (one round trip per queue); ids in input order. A queue's
   * `maxPending` is checked for the whole batch (all or nothing). A batch cannot debounce.
   */
  async enqueueMany<K extends TaskName<T>>(task: K, items: EnqueueItem<TaskArgs<T, K>>[]): Promise<string[]> {
    this.assertOpen();
    if (!Array.isArray(items)) throw new QueueError("enqueueMany takes an array of { args, options }");
    if (this.admission.limited) await this.admit(items.map((i) => i.options ?? {}));
    const prepared = this.enqueuer.prepareMany(task, items as EnqueueItem<unknown[]>[]);
    if (prepared.some((p) => p.debounce))
      throw new QueueError("enqueueMany cannot debounce: enqueue debounced jobs one at a time");
    return this.enqueuer.send(prepared);
  }

  private async enqueueOne(task: string, args: unknown[], options: EnqueueOptions): Promise<string> {
    this.assertOpen();
    if (this.admission.limited) await this.admit([options ?? {}]);
    const job = this.enqueuer.prepare(task, args, options);
    if (job.debounce) return this.enqueuer.sendDebounced(job);
    const [id] = await this.enqueuer.send([job]);
    return id!;
  }

  /** The `maxPending` check, first in the enqueue pipeline (before middleware and debounce). */
  private admit(options: EnqueueOptions[]): Promise<void> {
    const jobs = new Map<string, { namespace: string | undefined; count: number }>();
    for (const o of options) {
      const queue = o.queue ?? "default";
      const had = jobs.get(queue);
      if (had) had.count++;
      else jobs.set(queue, { namespace: o.namespace ?? this.core.namespace, count: 1 });
    }
    return this.admission.check(jobs);
  }

  /**
   * Sets a queue's limits (this process's producers apply them): `maxPending` refuses enqueues with
   * `QueueFullError` once that many jobs wait in the queue, counted across every process.
   */
  configureQueue(name: string, limits: QueueLimits): this {
    this.admission.configure(name, limits);
    return this;
  }

  private assertOpen(): void {
    if (this.closing) throw new QueueError("the queue is closed");
  }

  // --- results and jobs -----------------------------------------------------------------------------

  /**
   * Waits for a job's result. Rejects with `JobFailedError` (dead), `JobCancelledError`,
   * `ResultTimeoutError` (default 30 s) or `JobNotFoundError`.
   */
  result<R = unknown>(id: string, options: { timeoutMs?: number; pollMs?: number } = {}): Promise<R> {
    return waitForResult(this.core, id, options.timeoutMs) as Promise<R>;
  }

  /** The result of a completed job, or undefined. */
  getResult<R = unknown>(id: string): Promise<R | undefined> {
    return peekResult(this.core, id) as Promise<R | undefined>;
  }

  getJob(id: string): Promise<Job | null> {
    return this.inspector.getJob(id);
  }

  /** Jobs, newest first. */
  listJobs(filter?: JobFilter): Promise<Job[]> {
    return this.inspector.listJobs(filter);
  }

  /** Every failed attempt of a job, oldest first. */
  getJobErrors(id: string): Promise<JobAttemptError[]> {
    return this.inspector.getJobErrors(id);
  }

  /** Cancels a pending job. False when it is not pending (running, finished, unknown). */
  async cancelJob(id: string): Promise<boolean> {
    const job = await this.inspector.getJob(id);
    if (!job || (job.status !== "pending" && job.status !== "failed")) return false;
    const broker = await this.core.broker();
    const outcome = await broker.cancelMessage(engineQueue(job.namespace, job.queue), Number(id), {
      retainMs: this.core.resultTtlMs,
    });
    if (outcome !== "cancelled") return false;
    this.core.events.emit("job.cancelled", { jobId: id, taskName: job.taskName, queue: job.queue });
    await cancelFlow(this.core, broker, Number(id), this.core.resultTtlMs);
    return true;
  }

  /**
   * Asks a running job to stop: its handler's `currentJob().signal` aborts (at once in this process,
   * within a heartbeat elsewhere) and the job ends `cancelled`. A pending job is cancelled outright.
   */
  async requestCancel(id: string): Promise<boolean> {
    const seq = seqOf(id);
    const job = await this.inspector.getJob(id);
    if (seq === undefined || !job) return false;
    const broker = await this.core.broker();
    const outcome = await broker.cancelMessage(engineQueue(job.namespace, job.queue), seq, {
      retainMs: this.core.resultTtlMs,
    });
    if (outcome === "requested") for (const w of this.workers) w.cancelLocal(seq);
    if (outcome === "cancelled") {
      this.core.events.emit("job.cancelled", { jobId: id, taskName: job.taskName, queue: job.queue });
      await cancelFlow(this.core, broker, seq, this.core.resultTtlMs);
    }
    return outcome !== "none";
  }

  /** True when a cancellation was requested for the (running) job. */
  async isCancelRequested(id: string): Promise<boolean> {
    const seq = seqOf(id);
    if (seq === undefined) return false;
    const [rec] = await (await this.core.broker()).getMessages([seq]);
    return rec?.cancelRequested === true;
  }

  // --- stats and cleanup ----------------------------------------------------------------------------

  stats(): Promise<Stats> {
    return this.inspector.stats();
  }

  statsByQueue(queue: string): Promise<Stats> {
    return this.inspector.statsByQueue(queue);
  }

  statsAllQueues(): Promise<Record<string, Stats>> {
    return this.inspector.statsAllQueues();
  }

  /** Deletes completed jobs finished more than `olderThanMs` ago (0: all). Returns how many. */
  purgeCompleted(olderThanMs = 0): Promise<number> {
    return this.inspector.purgeCompleted(olderThanMs);
  }

  /**
   * Applies `keepCompleted` and `keepDead` now to the registered tasks' jobs in every queue of the
   * namespace (running workers do it every few seconds). Returns how many jobs it deleted.
   */
  async applyRetention(): Promise<number> {
    if (!hasRetention(this.core)) return 0;
    return applyRetention(this.core, await this.inspector.engineQueues());
  }

  // --- one job: promote, remove, retry --------------------------------------------------------------

  /**
   * Runs a delayed job now (or a failed one, waiting out its backoff). Throws `JobNotFoundError`, or
   * `JobStateError` when the job is not waiting for its time.
   */
  promote(id: string): Promise<void> {
    return promoteJob(this.core, id);
  }

  /**
   * Deletes a job that is not running, whatever its state, with its result, errors and log. A running
   * job is refused with `JobStateError` (ask it to stop with `requestCancel`, then remove it). A flow
   * parent still waiting has its pending children cancelled; a removed child counts as done for its
   * parent. Throws `JobNotFoundError` for an unknown id.
   */
  removeJob(id: string): Promise<void> {
    return removeJob(this.core, id);
  }

  /**
   * Runs a dead job again with a fresh retry budget (as `retryDead`), or a failed one (waiting out its
   * backoff) now. Throws `JobNotFoundError`, or `JobStateError` for a job in any other state.
   */
  retryJob(id: string): Promise<void> {
    return retryJob(this.core, id);
  }

  /** Stops workers everywhere from starting jobs of the queue (running ones finish). */
  async pauseQueue(queue: string): Promise<void> {
    await this.ensureEngineQueue(queue);
    await (await this.core.broker()).pauseQueue(engineQueue(this.core.namespace, queue));
  }

  async resumeQueue(queue: string): Promise<void> {
    await this.ensureEngineQueue(queue);
    await (await this.core.broker()).resumeQueue(engineQueue(this.core.namespace, queue));
  }

  listPausedQueues(): Promise<string[]> {
    return this.inspector.listPausedQueues();
  }

  private async ensureEngineQueue(queue: string): Promise<void> {
    const broker = await this.core.broker();
    const name = engineQueue(this.core.namespace, queue);
    if (!(await broker.listQueues()).some((q) => q.name === name)) await broker.createQueue(name);
  }

  // --- dead letters ---------------------------------------------------------------------------------

  /** Dead jobs, most recently failed first. */
  deadLetters(limit = 100, offset = 0): Promise<DeadJob[]> {
    return this.inspector.deadLetters(limit, offset);
  }

  deadLettersByTask(task: string, limit = 100, offset = 0): Promise<DeadJob[]> {
    return this.inspector.deadLetters(limit, offset, task);
  }

  /** Re-runs a dead job with a fresh retry budget (notes and metadata kept). Resolves with its id, or null. */
  retryDead(id: string): Promise<string | null> {
    return this.inspector.retryDead(id);
  }

  deleteDead(id: string): Promise<boolean> {
    return this.inspector.deleteDead(id);
  }

  /** Deletes dead jobs that failed more than `olderThanMs` ago (0: all). Returns how many. */
  purgeDead(olderThanMs = 0): Promise<number> {
    return this.inspector.purgeDead(olderThanMs);
  }

  // --- periodic jobs --------------------------------------------------------------------------------

  /**
   * Enqueues `task` on every tick of `cron` (5 or 6 fields; seconds first when 6), or every `everyMs`
   * (`registerPeriodic(name, task, { everyMs: 60_000 })`), once per tick across every worker of every
   * process. Fired by running workers. Returns the next tick (epoch ms).
   */
  registerPeriodic<K extends TaskName<T>>(
    name: string,
    task: K,
    cron: string,
    options?: PeriodicOptions & { args?: TaskArgs<T, K> },
  ): number | undefined;
  registerPeriodic<K extends TaskName<T>>(
    name: string,
    task: K,
    schedule: PeriodicScheduleOptions & { args?: TaskArgs<T, K> },
  ): number | undefined;
  registerPeriodic(
    name: string,
    task: string,
    schedule: string | PeriodicScheduleOptions,
    options: PeriodicOptions = {},
  ): number | undefined {
    if (typeof schedule === "string") return this.periodic.register(name, task, { cron: schedule }, options);
    if (typeof schedule !== "object" || schedule === null)
      throw new QueueError("registerPeriodic needs a cron string or { cron } / { everyMs }");
    const { cron, everyMs, ...rest } = schedule;
    return this.periodic.register(name, task, { cron, everyMs } as PeriodicSchedule, rest);
  }

  listPeriodic(): PeriodicTask[] {
    return this.periodic.list();
  }

  deletePeriodic(name: string): boolean {
    return this.periodic.delete(name);
  }

  pausePeriodic(name: string): boolean {
    return this.periodic.setEnabled(name, false);
  }

  resumePeriodic(name: string): boolean {
    return this.periodic.setEnabled(name, true);
  }

  // --- topic pub/sub --------------------------------------------------------------------------------

  /**
   * Registers `handler` as the task `taskName` and subscribes it to `topic`: every publish becomes one
   * ordinary job of that task (its own retries, DLQ, middleware, rate limits). The subscription is
   * written by `declareSubscriptions()` or when a worker starts (an ephemeral one, `durable: false`,
   * only by a worker, which owns it). Re-registering the same (topic, subscription name) replaces it.
   */
  subscriber<N extends string, H extends TaskHandler>(
    topic: string,
    taskName: N,
    handler: H,
    options: SubscriberOptions = {},
  ): Queue<T & Record<N, H>> {
    const {
      subscriptionName: _n,
      queue: _q,
      durable: _d,
      priority: _p,
      filter: _f,
      ...taskOptions
    } = options;
    this.topics.addSubscriber(topic, taskName, options);
    return this.task(taskName, handler, taskOptions);
  }

  /** Writes the durable subscribers registered in this process, and the managed consumers' log subscriptions. */
  declareSubscriptions(): Promise<void> {
    return this.topics.declareSubscriptions();
  }

  /**
   * Publishes to a topic: one job per active fan-out subscription (`[]` when there is none), and one
   * log message when the topic has log subscribers or is declared. The arguments are encoded once
   * with the queue's serializer.
   */
  publish(topic: string, args: unknown[] = [], options: PublishOptions = {}): Promise<Job[]> {
    this.assertOpen();
    return this.topics.publish(topic, args, options);
  }

  /** Stops deliveries to a subscription (it is kept). False when it does not exist. */
  pauseSubscription(topic: string, name: string): Promise<boolean> {
    return this.topics.pause(topic, name);
  }

  resumeSubscription(topic: string, name: string): Promise<boolean> {
    return this.topics.resume(topic, name);
  }

  /** Removes a subscription (and its pending registration in this process). False when it does not exist. */
  unsubscribe(topic: string, name: string): Promise<boolean> {
    return this.topics.unsubscribe(topic, name);
  }

  /** Every subscription (paused too); with a topic, that topic's active ones, oldest first. */
  listSubscriptions(topic?: string): Promise<Subscription[]> {
    return this.topics.list(topic);
  }

  /** Distinct topics with a subscriber. */
  listTopics(): Promise<string[]> {
    return this.topics.listTopics();
  }

  /** The backlog of every fan-out subscription (of one topic): pending, running, dead. */
  topicStats(topic?: string): Promise<TopicStat[]> {
    return this.topics.stats(topic);
  }

  /** Removes ephemeral subscriptions whose worker stopped heartbeating (workers do this on their own). */
  reapEphemeralSubscriptions(): Promise<number> {
    return this.topics.reap();
  }

  /** Subscribes a named cursor to a topic's log (written at once). */
  subscribeLog(topic: string, name: string): Promise<void> {
    return this.topics.subscribeLog(topic, name);
  }

  /**
   * A managed log consumer: a worker of this queue reads the log subscription `name`, runs `handler`
   * on each message (its arguments spread) and moves the cursor. The subscription is registered at
   * once (not awaited: `declareSubscriptions()` is the barrier).
   */
  logConsumer(topic: string, name: string, handler: TaskHandler, options: LogConsumerOptions = {}): this {
    this.topics.addConsumer(topic, name, handler, options);
    this.topics.subscribeLog(topic, name).catch((err) => {
      this.core.logger.warn(
        { topic, subscription: name, err: String(err) },
        "could not register a log consumer",
      );
    });
    return this;
  }

  /** Declares a topic: its publishes are kept even without a log subscriber, `retention` seconds at most. */
  declareTopic(name: string, options: { retention?: number } = {}): Promise<void> {
    return this.topics.declareTopic(name, options.retention);
  }

  listDeclaredTopics(): Promise<DeclaredTopic[]> {
    return this.topics.listDeclared();
  }

  /** A log subscription's messages after its cursor, oldest first (reading moves nothing). */
  readTopic(topic: string, name: string, limit = 100): Promise<TopicMessage[]> {
    return this.topics.read(topic, name, limit);
  }

  /** Moves the cursor up to `cursor` (inclusive). False when it is already there or beyond. */
  ackTopic(topic: string, name: string, cursor: string | number): Promise<boolean> {
    return this.topics.ack(topic, name, cursor);
  }

  /** Leases messages one by one (`visibility` in seconds): each is skipped by later leases until then. */
  leaseTopic(
    topic: string,
    name: string,
    options: { limit?: number; visibility?: number } = {},
  ): Promise<TopicMessage[]> {
    return this.topics.lease(topic, name, options.limit ?? 100, options.visibility ?? 30);
  }

  ackMessage(topic: string, name: string, id: string | number): Promise<boolean> {
    return this.topics.ackMessage(topic, name, id);
  }

  /** Gives a leased message back for immediate redelivery. */
  nackMessage(topic: string, name: string, id: string | number): Promise<boolean> {
    return this.topics.nackMessage(topic, name, id);
  }

  /** The lag of every log subscription. */
  topicLogStats(): Promise<TopicLogStat[]> {
    return this.topics.logStats();
  }

  // --- workers --------------------------------------------------------------------------------------

  /** Starts a worker in this process. Hold on to it; `stop()` it (or `close()` the queue) to end it. */
  runWorker(options: WorkerRunOptions = {}): Worker {
    this.assertOpen();
    const worker = new Worker(this.core, this.periodic, options, this.topics);
    this.workers.add(worker);
    this.stopFlowSweep ??= startFlowSweep(this.core);
    this.stopRetention ??= startRetentionSweep(this.core, () => this.applyRetention());
    worker.start();
    return worker;
  }

  /** Every live worker of the namespace (any process). */
  listWorkers(): Promise<WorkerStatus[]> {
    return this.inspector.listWorkers();
  }

  /** Stops every worker of this queue (running handlers finish; their metrics are stored). */
  async shutdown(): Promise<void> {
    await Promise.all([...this.workers].map((w) => w.stop()));
    this.workers.clear();
    await this.core.metrics.flush();
    this.stopFlowSweep?.();
    this.stopFlowSweep = undefined;
    this.stopRetention?.();
    this.stopRetention = undefined;
  }

  /** Stops the workers and releases the broker (a broker passed in `options.broker` stays open). */
  close(): Promise<void> {
    if (!this.closing) {
      this.closing = (async () => {
        await this.shutdown();
        await closeSandboxes(this.core);
        await this.recorder?.flush();
        await this.release?.();
      })();
    }
    return this.closing;
  }

  // --- flows and job logs ---------------------------------------------------------------------------

  /**
   * Enqueues a flow in one transaction: a job and the jobs it waits for (`children`, nested). A job
   * runs only once all its children have completed; it reads their results with
   * `currentJob().childResults()`. A child that dies fails its parent, unless the child's options
   * say `failParentOnFailure: false` (then the parent runs and reads `currentJob().childFailures()`).
   * Resolves with the ids, shaped as the flow.
   */
  enqueueFlow(flow: FlowJob): Promise<FlowNodeIds> {
    this.assertOpen();
    return enqueueFlow(this.core, this.enqueuer, flow);
  }

  // --- metrics --------------------------------------------------------------------------------------

  /**
   * Per-minute counts of jobs that completed, or failed for good (dead-lettered), in `[from, to]`
   * (default: the last 7 days), counted by every worker on the broker. Minutes without any are left
   * out. Buckets are kept 7 days; a range spans at most 7 days (`InvalidArgumentError` beyond).
   */
  async getMetrics(kind: "completed" | "failed", options: MetricsOptions = {}): Promise<JobMetrics> {
    const broker = await this.core.broker();
    let queues: string[];
    if (options.queue !== undefined) queues = [engineQueue(this.core.namespace, options.queue)];
    else {
      queues = (await broker.listQueues())
        .filter((q) => q.kind === "queue" && inNamespace(q.name, this.core.namespace))
        .map((q) => q.name);
    }
    const range = {
      ...(options.from !== undefined && { from: options.from }),
      ...(options.to !== undefined && { to: options.to }),
    };
    // A read names at most MAX_NAME_LIST queues: a namespace with more is read in parts and summed.
    const byMinute = new Map<number, number>();
    let i = 0;
    do {
      const part = await broker.readMetrics(kind, { ...range, queues: queues.slice(i, i + MAX_NAME_LIST) });
      for (const p of part) byMinute.set(p.minute, (byMinute.get(p.minute) ?? 0) + p.count);
      i += MAX_NAME_LIST;
    } while (i < queues.length);
    const data = [...byMinute].sort((a, b) => a[0] - b[0]).map(([minute, count]) => ({ minute, count }));
    return { data, count: data.reduce((n, p) => n + p.count, 0) };
  }

  /** A job's log lines (`currentJob().log`), oldest first: `{ logs, count }`. */
  async getJobLogs(id: string, options: { offset?: number; limit?: number } = {}): Promise<JobLogs> {
    const seq = seqOf(id);
    if (seq === undefined) return { logs: [], count: 0 };
    const page = await (await this.core.broker()).messageLog(seq, options);
    return { logs: page.entries.map((e) => e.text), count: page.total };
  }
}
