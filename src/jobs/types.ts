import type { Broker } from "../contract/broker.js";
import type { JobStatus } from "../contract/job-status.js";
import type { RetryBackoff } from "./backoff.js";
import type { DebounceFields } from "./debounce.js";
import type { RateLimit } from "./rate-limit.js";
import type { KeepJobs } from "./retention.js";
import type { Serializer } from "./serializer.js";

/** Options of `new Queue(options)`. */
export interface QueueOptions {
  /**
   * The SQLite file (parent folders are created), or `":memory:"`. Default `.mqlite/jobs.db`.
   * Queues of one process opened on the same file share one connection.
   */
  dbPath?: string;
  /**
   * Where the broker is: `postgres://…` (a PostgreSQL database many nodes share) or a SQLite path.
   * Wins over `dbPath`. Opened through `openBroker`, which picks the engine by location.
   */
  dsn?: string;
  /** PostgreSQL only: the schema of the tables (default `mqlite`). */
  schema?: string;
  /** Any `Broker` instead of a file: embedded (`openBroker`) or remote (`connect(url)`). Not closed by `close()`. */
  broker?: Broker;
  /** Default `JsonSerializer`. */
  serializer?: Serializer;
  /** Jobs of a namespace live in their own queues: workers and inspection only see their namespace. */
  namespace?: string;
  /** How long completed and cancelled jobs (and results) are kept. Default 24 hours; 0 keeps nothing. */
  resultTtlMs?: number;
  /**
   * Completed jobs kept per task and queue: at most the newest `count`, none older than `ageMs`
   * (on top of `resultTtlMs`). Applied by running workers every few seconds. A task's own wins.
   */
  keepCompleted?: KeepJobs;
  /** Dead jobs kept per task and queue, like `keepCompleted`. Default: every dead job is kept. */
  keepDead?: KeepJobs;
  // --- events across processes ---
  /**
   * Default true: this queue's job events (enqueues, and the outcomes of its workers' jobs) are also
   * stored in the broker's event log, where `QueueEvents` in any process reads them.
   */
  recordEvents?: boolean;
  /**
   * How long a worker's claim holds a job (ms) before another worker may take it, unless the
   * worker renews it: its workers renew every running job at least every `leaseMs / 3` (and every
   * heartbeat). A worker that dies (a crash, SIGKILL) leaves its jobs to run again within about
   * `leaseMs`, whatever their timeout. Default 30000; from 1000 to ten years (else a `QueueError`).
   * A worker may set its own (`runWorker({ leaseMs })`).
   */
  leaseMs?: number;
}

/** A task's handler: positional arguments, any return value (awaited). */
export type TaskHandler = (...args: any[]) => unknown;

/** Options of `queue.task(name, handler, options)`. The debounce fields are every enqueue's defaults. */
export interface TaskOptions extends DebounceFields {
  /** Retries after the first attempt (0 = never retry). Also the per-job default. Default 3. */
  maxRetries?: number;
  /**
   * The wait between attempts: `{ baseMs, maxMs }` (exponential, the default: 1 s doubling up to
   * 5 min), `{ type: "fixed", delayMs }`, or a function `(attempt, error) => ms`.
   */
  retryBackoff?: RetryBackoff;
  /**
   * Decides whether a failure may be retried (`false` dead-letters at once, whatever the budget).
   * Timeouts and undecodable payloads are always retried; a throwing predicate means "retry".
   */
  retryOn?: (error: unknown) => boolean;
  /** Per-attempt timeout (ms). Also the per-job default. Default 300000. */
  timeoutMs?: number;
  /** At most this many jobs of the task run at once, across every worker. */
  maxConcurrent?: number;
  /** At most so many starts per second, minute or hour, across every worker (`"100/s"`, `"20/m"`, `"1000/h"`). */
  rateLimit?: RateLimit;
  /** How long this task's completed jobs are kept (overrides the queue's `resultTtlMs`). */
  resultTtlMs?: number;
  /** This task's completed jobs kept per queue: `{ count, ageMs }` (overrides the queue's). */
  keepCompleted?: KeepJobs;
  /** This task's dead jobs kept per queue: `{ count, ageMs }` (overrides the queue's). */
  keepDead?: KeepJobs;
}

/**
 * Options of `enqueue`. The debounce fields override the task's, field by field; a debounced
 * enqueue ignores `delayMs` (the window sets the run time) and cannot take a `uniqueKey`.
 */
export interface EnqueueOptions extends DebounceFields {
  /** Default `"default"`. */
  queue?: string;
  /** Higher runs first within a queue. Default 0. */
  priority?: number;
  /** Default: the task's, else 3. */
  maxRetries?: number;
  /** Default: the task's, else 300000. */
  timeoutMs?: number;
  /** First run no earlier than this long from now. */
  delayMs?: number;
  /** While a job with this key is pending or running in the queue, enqueueing returns that job's id. */
  uniqueKey?: string;
  /** Free-form text kept with the job. */
  metadata?: string;
  /** A plain object (≤ 15 fields, ≤ 4 KiB as JSON), kept as canonical JSON; survives the dead-letter queue. */
  notes?: Record<string, unknown>;
  /** Overrides the queue's namespace for this job. */
  namespace?: string;
}

export type { JobStatus };

/** A job as `getJob` and `listJobs` return it. Times are epoch ms. */
export interface Job {
  id: string;
  queue: string;
  taskName: string;
  status: JobStatus;
  priority: number;
  /** 0..100, as the handler last reported it (`currentJob().setProgress`). */
  progress?: number;
  /** Failed attempts so far (before the current or last one). */
  retryCount: number;
  maxRetries: number;
  /** The serialized result (see `getResult` for the value). */
  result?: Buffer;
  /** The last attempt's error (JSON `{"errtype","message","traceback"}`). */
  error?: string;
  createdAt: number;
  /** When it runs (or ran) next: the enqueue time, a delay, or a backoff. */
  scheduledAt: number;
  startedAt?: number;
  completedAt?: number;
  timeoutMs: number;
  uniqueKey?: string;
  metadata?: string;
  /** The notes as canonical JSON text. */
  notes?: string;
  namespace?: string;
}

/** Counts of jobs by status. */
export interface Stats {
  pending: number;
  running: number;
  completed: number;
  failed: number;
  dead: number;
  cancelled: number;
}

/** Filter of `listJobs` (newest first). */
export interface JobFilter {
  status?: JobStatus | "completed";
  queue?: string;
  task?: string;
  /** Default 100, at most 1000. */
  limit?: number;
  offset?: number;
}

/** A dead-lettered job. */
export interface DeadJob {
  /** The id to pass to `retryDead` and `deleteDead` (the job's own id). */
  id: string;
  originalJobId: string;
  queue: string;
  taskName: string;
  error?: string;
  retryCount: number;
  failedAt: number;
  metadata?: string;
  notes?: string;
  /** How many times it was retried from the dead-letter queue. */
  dlqRetryCount: number;
}

/** One failed attempt (`getJobErrors`). */
export interface JobAttemptError {
  id: string;
  jobId: string;
  attempt: number;
  error: string;
  failedAt: number;
}

/** Options of `runWorker`. */
export interface WorkerRunOptions {
  /** Default `["default"]`. */
  queues?: string[];
  /** Jobs run at once by this worker. Default 16. */
  concurrency?: number;
  /**
   * The most jobs one claim takes. A claim takes no more than the free slots, except while the
   * worker's jobs are short (under 5 ms on average): then it claims up to `batchSize` ahead and
   * starts them as slots free, so tiny jobs share claims and commits (with the next batch claimed
   * once half of one waits: up to one and a half batches wait). Default: max(concurrency, 64).
   */
  batchSize?: number;
  /** Heartbeat period; lease renewals and cancel checks run at least this often. Default 5000. */
  heartbeatIntervalMs?: number;
  /**
   * This worker's lease on the jobs it claims (ms; see `QueueOptions.leaseMs`, its default). Running
   * jobs are renewed every `min(heartbeatIntervalMs, leaseMs / 3)`.
   */
  leaseMs?: number;
}

/** A worker as `listWorkers` reports it. */
export interface WorkerStatus {
  workerId: string;
  queues: string[];
  status: "active" | "draining";
  lastHeartbeat: number;
  startedAt: number;
  hostname?: string;
  pid?: number;
  concurrency?: number;
  namespace?: string;
}

/** The payload of job events and outcome hooks. */
export interface OutcomeEvent {
  jobId: string;
  taskName: string;
  queue?: string;
  error?: string;
  retryCount?: number;
  timedOut?: boolean;
  durationMs?: number;
}

/** The payload of worker events. */
export interface WorkerEvent {
  workerId: string;
  queues?: string[];
}

/** Every event `queue.on` knows, with its payload. */
export interface QueueEventMap {
  "job.enqueued": OutcomeEvent;
  "job.completed": OutcomeEvent;
  "job.failed": OutcomeEvent;
  "job.retrying": OutcomeEvent;
  "job.dead": OutcomeEvent;
  "job.cancelled": OutcomeEvent;
  "worker.started": WorkerEvent;
  "worker.stopped": WorkerEvent;
  "worker.online": WorkerEvent;
  "worker.offline": WorkerEvent;
  // --- progress and starts (also read across processes by `QueueEvents`) ---
  "job.started": JobStartedEvent;
  "job.progress": JobProgressEvent;
}

/** `job.started`: a worker began an attempt. */
export interface JobStartedEvent {
  jobId: string;
  taskName: string;
  queue: string;
  /** 1 for the first attempt. */
  attempt: number;
}

/** `job.progress`: a handler reported progress (`currentJob().updateProgress`). */
export interface JobProgressEvent {
  jobId: string;
  /** 0..100. */
  progress: number;
  taskName?: string;
  queue?: string;
}

/** What middleware sees of an attempt. */
export interface TaskContext {
  jobId: string;
  taskName: string;
  args: unknown[];
  metadata?: string;
  /** 1 for the first attempt. */
  attempt: number;
}

/** What `onEnqueue` may change before the job is stored. */
export interface EnqueueContext {
  taskName: string;
  args: unknown[];
  options: EnqueueOptions;
}

/**
 * Middleware (`queue.use`): `onEnqueue` runs in the producer (sync; throw to refuse the job);
 * `before`/`after`/`onError` run around each attempt and are awaited (within its timeout);
 * the outcome hooks run after the outcome is stored, are not awaited, and their errors are ignored.
 */
export interface Middleware {
  name?: string;
  onEnqueue?(ctx: EnqueueContext): void;
  before?(ctx: TaskContext): void | Promise<void>;
  after?(ctx: TaskContext, result: unknown): void | Promise<void>;
  onError?(ctx: TaskContext, error: unknown): void | Promise<void>;
  onCompleted?(event: OutcomeEvent): void;
  onRetry?(event: OutcomeEvent): void;
  onDeadLetter?(event: OutcomeEvent): void;
  onCancel?(event: OutcomeEvent): void;
}

/** Options of `registerPeriodic`. */
export interface PeriodicOptions {
  args?: unknown[];
  queue?: string;
  /** IANA time zone of the cron expression (default UTC; ignored with `everyMs`). */
  timezone?: string;
  /** Default true. */
  enabled?: boolean;
}

/**
 * The schedule of `registerPeriodic(name, task, { everyMs })` (or `{ cron }`): exactly one of a
 * cron expression and an interval.
 */
export interface PeriodicScheduleOptions extends PeriodicOptions {
  /** 5 or 6 fields (seconds first when 6). */
  cron?: string;
  /**
   * Fires every so many ms (a whole number, at least 100), on the multiples of `everyMs` since the
   * Unix epoch, so every process agrees on the ticks: `everyMs: 60_000` fires at each full minute.
   */
  everyMs?: number;
}

/** A registered periodic job: `cron` or `everyMs`, whichever it was registered with. */
export interface PeriodicTask {
  name: string;
  taskName: string;
  cron?: string;
  everyMs?: number;
  queue: string;
  timezone?: string;
  enabled: boolean;
  /** Next fire time (epoch ms), if any. */
  nextRun?: number;
}

// --- flows --------------------------------------------------------------------------------------

/** Options of one job of a flow: those of `enqueue`, and what its failure does to its parent. */
export interface FlowJobOptions extends Omit<EnqueueOptions, "uniqueKey" | keyof DebounceFields> {
  /**
   * Default true: when this job dies (dead-lettered or cancelled), its parent dies too, without
   * running. False: the parent runs once its other children are done, and reads this job's failure
   * with `currentJob().childFailures()`.
   */
  failParentOnFailure?: boolean;
}

/** One job of a flow (`queue.enqueueFlow`): a task, its arguments, and the jobs it waits for. */
export interface FlowJob {
  task: string;
  args?: unknown[];
  options?: FlowJobOptions;
  /** Jobs that must complete before this one runs. */
  children?: FlowJob[];
}

/** The ids of a stored flow, shaped like the flow. */
export interface FlowNodeIds {
  id: string;
  children: FlowNodeIds[];
}

// --- job logs -----------------------------------------------------------------------------------

/** A page of a job's log (`queue.getJobLogs`). */
export interface JobLogs {
  /** The lines, oldest first. */
  logs: string[];
  /** How many lines the job keeps (at most 1000; older ones are dropped). */
  count: number;
}

// --- queue limits and metrics -------------------------------------------------------------------

/** Options of `queue.configureQueue(name, limits)`. */
export interface QueueLimits {
  /**
   * An admission cap on the queue's backlog: once this many jobs wait in it (pending, delayed, or
   * failed and waiting for their retry), `enqueue` and `enqueueMany` throw `QueueFullError`. The
   * count is read from the store, so it includes jobs enqueued by other processes; it is checked by
   * each producer before it enqueues (count, then insert: racing producers may pass it by a few).
   * `undefined` removes the cap.
   */
  maxPending?: number;
}

/** Options of `queue.getMetrics`. */
export interface MetricsOptions {
  /** Epoch ms (default: `to` minus 7 days). */
  from?: number;
  /** Epoch ms (default: now). At most 7 days after `from`. */
  to?: number;
  /** Only this queue (default: every queue of the namespace). */
  queue?: string;
}

/** One minute of `getMetrics`: its start (epoch ms) and how many jobs settled so in it. */
export interface MetricsPoint {
  minute: number;
  count: number;
}

/** What `queue.getMetrics` returns: the minutes with settlements, oldest first, and their sum. */
export interface JobMetrics {
  data: MetricsPoint[];
  count: number;
}
