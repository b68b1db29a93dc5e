import { statSync } from "node:fs";
import type { Broker } from "../../contract/broker.js";
import { type ConsumeHandler, type ConsumeOptions, type Consumer, consume } from "../../contract/consume.js";
import {
  ClosedError,
  InvalidArgumentError,
  NameConflictError,
  NotFoundError,
} from "../../contract/errors.js";
import type {
  AttemptError,
  BrowseOptions,
  CancelMessageOptions,
  CancelOutcome,
  DeleteSettledOptions,
  Dependency,
  EventInput,
  EventPage,
  FlowNode,
  HeartbeatResult,
  MessageLogPage,
  MessageRecord,
  MetricIncrement,
  MetricKind,
  MetricPoint,
  MetricsQuery,
  ReceiveAnyOptions,
  WorkerInfo,
  WorkerRecord,
} from "../../contract/job-service.js";
import { type Logger, stderrLogger } from "../../contract/logger.js";
import { messageOf } from "../../contract/message-of.js";
import type {
  DeclareTopicOptions,
  EngineDeclaredTopic,
  EngineTopicLogStat,
  LeaseTopicOptions,
  LogSubscribeOptions,
  ReadTopicOptions,
  ReapOptions,
  TaskSubscribeOptions,
  TopicBacklog,
  TopicLogMessage,
} from "../../contract/topic-service.js";
import type {
  BrokerStatus,
  FilterSample,
  Message,
  MessageState,
  OutgoingMessage,
  PeekOptions,
  PurgeOptions,
  QueueConfig,
  QueueInfo,
  QueueStats,
  Readiness,
  ReceiveOptions,
  RedriveOptions,
  SendOptions,
  SubscribeOptions,
  SubscriptionInfo,
  TestFilterResult,
} from "../../contract/types.js";
import { MESSAGE_STATES } from "../../contract/types.js";
import type { Clock } from "../../core/clock.js";
import { systemClock } from "../../core/clock.js";
import { CoreBroker } from "../../core/core-broker.js";
import { type DlqBounds, NO_DLQ_BOUNDS } from "../../core/dlq-bounds.js";
import {
  DEFAULT_TOPIC_READ,
  DEFAULT_VISIBILITY_MS,
  EPHEMERAL_GRACE_MS,
  EPHEMERAL_LIVENESS_MS,
  MAX_TOPIC_READ,
  TOPIC_PURGE_LIMIT,
} from "../../core/fanout.js";
import { compileFilter, testFilter } from "../../core/filters.js";
import {
  checkEvents,
  checkLogLines,
  eventLimit,
  logPage,
  type PreparedFlowNode,
  prepareFlow,
  waitingNodes,
} from "../../core/flow-input.js";
import { validateGates } from "../../core/gates.js";
import { leaseCap } from "../../core/lease.js";
import { DEFAULT_WORKER_STALE_MS, RECEIVE_BODY_BUDGET } from "../../core/limits.js";
import { Loops } from "../../core/loops.js";
import { emptyResult, type MaintenanceResult } from "../../core/maintenance-result.js";
import { type MessageRow, PEEK_COLUMNS, peekedMessage } from "../../core/message-row.js";
import { checkIncrements, metricKind, metricsRange } from "../../core/metrics-input.js";
import { type PreparedMessage, prepareMessages } from "../../core/outgoing.js";
import { pingMsSince } from "../../core/ping.js";
import { type Dialect, type Effects, type Ops, runSync } from "../../core/port.js";
import { type CountRow, statsFromCounts } from "../../core/queue-counts.js";
import { awaitSettled } from "../../core/settled-waits.js";
import { taskSpec } from "../../core/subscription-rows.js";
import { type DeliveryCount, topicBacklog } from "../../core/topic-stats.js";
import {
  clampCount,
  integer,
  nonNegative,
  nonNegativeDuration,
  requireName,
  seqNumber,
  seqNumberList,
} from "../../core/validate.js";
import { type SendAt, type Sent, sendAt, send as sendVerb } from "../../core/verbs/send.js";
import { Waiters } from "../../core/waiters.js";
import type { WriteContext } from "../../core/write-context.js";
import { VERSION } from "../../version.js";
import { type CheckpointedFile, checkpointInBackground } from "./checkpointer.js";
import { Claimer } from "./claim.js";
import { ClaimGates } from "./claim-gates.js";
import { isMemoryPath, normalizePath, openDatabase, type SqliteDatabase } from "./database.js";
import { Dependencies } from "./dependencies.js";
import { EventLog } from "./event-log.js";
import { JobMetrics } from "./job-metrics.js";
import { Locks } from "./locks.js";
import { Maintenance } from "./maintenance.js";
import { MessageLogs } from "./message-logs.js";
import { MessageRecords } from "./message-records.js";
import { LATEST_SCHEMA_VERSION } from "./migrations/index.js";
import { QueueRegistry } from "./queue-registry.js";
import { fileReadiness } from "./readiness.js";
import { MultiReceiver } from "./receive-any.js";
import { SqliteSendOps } from "./send.js";
import { SequenceNumbers } from "./sequence-numbers.js";
import { SqliteSettleOps } from "./settle.js";
import { mapSqliteError } from "./sqlite-errors.js";
import { Subscriptions } from "./subscriptions.js";
import type { SyncMode } from "./sync-mode.js";
import { TopicLog } from "./topic-log.js";
import { Workers } from "./workers.js";
import { Writer } from "./writer.js";

/** Options of `openBroker`. */
export interface SqliteBrokerOptions {
  /** Source of "now" (epoch ms). Default: the wall clock. */
  clock?: Clock;
  /** SQLite `synchronous`: `normal` (default), `full`, `off` or `extra`. */
  synchronous?: SyncMode;
  /** How long a write waits for another process's lock. Default 5000 ms. */
  busyTimeoutMs?: number;
  /** Hold the file exclusively; a second opener fails fast with `db_locked`. Default false. */
  exclusive?: boolean;
  /** Largest message body in bytes. Default 1 MiB. */
  maxMessageBytes?: number;
  /** Run the background loops (reaper, scheduler, TTL, janitors, retention, reclaim). Default true. */
  background?: boolean;
  /**
   * Copy committed pages from the WAL into the file on a background thread (one per process), so
   * a commit seldom stalls for a checkpoint. Default true; ignored for in-memory and exclusive files.
   */
  checkpointThread?: boolean;
  /** Broker-wide DLQ retention that queues inherit. Default: no bounds. */
  dlqRetention?: Partial<DlqBounds>;
  /** Where warnings (such as failing filters) go. Default: stderr. */
  logger?: Logger;
}

/** The application's own SQL and sends in one transaction (`broker.tx`). */
export interface Transaction {
  /** The underlying better-sqlite3 connection, inside the open transaction. */
  readonly db: SqliteDatabase;
  /** Sends (or publishes) within the transaction; returns the sequence numbers. */
  send(queue: string, messages: OutgoingMessage | OutgoingMessage[], options?: SendOptions): number[];
}

export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;
const MAX_RECEIVE = 256;
const MAX_WAIT_MS = 20_000;
const MAX_PEEK = 1000;
const DEFAULT_PEEK = 32;

/** `PRAGMA synchronous` values by number. */
const SYNC_NAMES = ["off", "normal", "full", "extra"];

/**
 * The embedded engine: the `Broker` contract over one SQLite file, plus what only an in-process
 * broker can offer (`tx`, `runMaintenanceOnce`).
 */
export class SqliteBroker extends CoreBroker implements Broker {
  readonly clock: Clock;
  private readonly db: SqliteDatabase;
  private readonly location: string;
  private readonly writer: Writer;
  private readonly queues: QueueRegistry;
  private readonly subscriptions: Subscriptions;
  private readonly topicLog: TopicLog;
  private allTopicCounts: { all(...params: unknown[]): unknown[] } | undefined;
  private oneTopicCounts: { all(...params: unknown[]): unknown[] } | undefined;
  private readonly ids: SequenceNumbers;
  private readonly topicIds: SequenceNumbers;
  private readonly claimer: Claimer;
  private readonly settleOps: SqliteSettleOps;
  private readonly ops: Ops;
  protected readonly dialect: Dialect = {
    write: (verb, options) =>
      this.write(
        (ctx, now) => runSync(verb({ now, effects: this.effectsOf(ctx, now) }), this.ops),
        options?.signal,
      ),
    read: (verb) => this.read(() => runSync(verb(this.clock.now()), this.ops)),
  };
  private readonly maintenance: Maintenance;
  private readonly loops: Loops;
  private readonly waiters: Waiters<Message>;
  private readonly logger: Logger;
  protected readonly maxMessageBytes: number;
  private readonly dlqBounds: DlqBounds;
  private readonly openedAt: number;
  private readonly dataVersion;
  private lastDataVersion = 0;
  private closing: Promise<void> | undefined;
  /** Copies committed pages into the file off the event loop (file-backed, shared files only). */
  private readonly checkpoints: CheckpointedFile | undefined;
  private readonly completedCounts = new Map<string, number>();
  private readonly sentCounts = new Map<string, number>();
  private readonly statsRows;
  private readonly oldestRow;
  private readonly peekRows;
  private readonly clearQueueAux;
  private readonly records: MessageRecords;
  private readonly gates: ClaimGates;
  private readonly workers: Workers;
  private readonly locks: Locks;
  private readonly multiReceiver: MultiReceiver;
  /** Wake-ups of `awaitSettled`, keyed by sequence number. */
  private readonly settledWaiters: Waiters;

  constructor(path: string, options: SqliteBrokerOptions = {}) {
    super();
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? stderrLogger;
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.dlqBounds = { ...NO_DLQ_BOUNDS, ...options.dlqRetention };
    this.location = normalizePath(path);
    this.db = openDatabase(path, {
      synchronous: options.synchronous,
      busyTimeoutMs: options.busyTimeoutMs,
      exclusive: options.exclusive,
      now: this.clock.now(),
    });
    this.openedAt = this.clock.now();
    this.dataVersion = this.db.prepare("PRAGMA data_version").pluck();
    this.lastDataVersion = this.dataVersion.get() as number;
    this.queues = new QueueRegistry(this.db);
    this.subscriptions = new Subscriptions(this.db, this.queues, (source) =>
      compileFilter(source, this.logger),
    );
    this.ids = new SequenceNumbers(this.db, "messages");
    this.topicIds = new SequenceNumbers(this.db, "topic_messages");
    this.topicLog = new TopicLog(this.db, this.topicIds);
    this.claimer = new Claimer(this.db, (at) => this.loops.armReaper(at));
    this.settleOps = new SqliteSettleOps(this.db, this.queues);
    this.ops = {
      settle: this.settleOps,
      claim: {},
      send: new SqliteSendOps(this.db, this.ids, this.queues, this.subscriptions, this.topicLog),
      queues: {},
      topics: {},
      maintenance: {},
      records: {},
      flows: {},
    };
    this.maintenance = new Maintenance(this.db, this.ids);
    this.writer = new Writer(
      this.db,
      () => this.checkExternalChange(),
      () => this.dropCaches(),
      () => this.checkpoints?.nudge(),
    );
    this.waiters = new Waiters<Message>(() => this.checkExternalChange());
    this.settledWaiters = new Waiters(() => this.checkExternalChange());
    this.records = new MessageRecords(this.db);
    this.gates = new ClaimGates(this.db);
    this.workers = new Workers(this.db);
    this.locks = new Locks(this.db);
    this.multiReceiver = new MultiReceiver({
      clock: this.clock,
      write: (fn, signal) => this.write(fn, signal),
      queues: this.queues,
      claimer: this.claimer,
      gates: this.gates,
      waiters: this.waiters,
    });
    // Counts are kept by triggers (migration 9): a few rows, whatever the backlog. The oldest live
    // message is the first by sequence in each of the two states: sequence numbers follow send
    // time, so that is MIN(enqueued_at) in two index seeks instead of a read of every row.
    this.statsRows = this.db.prepare("SELECT state, n FROM queue_counts WHERE queue = ?");
    const firstIn = (state: string) =>
      `SELECT * FROM (SELECT enqueued_at FROM messages INDEXED BY idx_msg_queue_state
        WHERE queue = ? AND state = '${state}' ORDER BY id LIMIT 1)`;
    this.oldestRow = this.db.prepare(
      `SELECT min(enqueued_at) AS oldest FROM (${firstIn("active")} UNION ALL ${firstIn("locked")})`,
    );
    this.peekRows = this.db.prepare(
      `SELECT ${PEEK_COLUMNS} FROM messages WHERE queue = ? AND state = ? AND id >= ? ORDER BY id LIMIT ?`,
    );
    this.clearQueueAux = [
      this.db.prepare("DELETE FROM dedup WHERE queue = ?"),
      this.db.prepare("DELETE FROM settlement_receipts WHERE queue = ?"),
      this.db.prepare("DELETE FROM receive_attempts WHERE queue = ?"),
    ];
    // Crash recovery: only leases that have lapsed (another live process may hold the rest).
    this.writer.runNow(() => this.maintenance.reap(this.clock.now(), emptyResult()));
    // Last: nothing below can fail and leave the thread a connection to a file no broker holds.
    if (options.checkpointThread !== false && !isMemoryPath(path) && !options.exclusive) {
      this.checkpoints = this.startCheckpoints(options.synchronous ?? "normal");
    }
    this.loops = new Loops({
      clock: this.clock,
      run: (step) => this.runMaintenanceStep(step),
      nextScheduled: () => this.maintenance.nextScheduled(),
      nextLeaseEnd: () => this.maintenance.nextLeaseEnd(),
      reclaim: isMemoryPath(path) ? undefined : () => this.maintenance.reclaim(),
      logger: this.logger,
    });
    if (options.background !== false) this.loops.start();
  }

  /** Hands the file to the checkpoint thread; without one (it could not start), commits checkpoint. */
  private startCheckpoints(synchronous: SyncMode): CheckpointedFile | undefined {
    const stopped = (err: unknown) =>
      this.logger.warn({ err: messageOf(err) }, "background checkpoints stopped; commits checkpoint instead");
    try {
      return checkpointInBackground(this.location, synchronous, stopped);
    } catch (err) {
      stopped(err);
      return undefined;
    }
  }

  /** True when another connection committed since the last check; drops every cache if so. */
  private checkExternalChange(): boolean {
    const v = this.dataVersion.get() as number;
    if (v === this.lastDataVersion) return false;
    this.lastDataVersion = v;
    this.dropCaches();
    // Whoever notices the change wakes the long-polls: a write noticing it first must not swallow it.
    this.waiters?.notifyAll();
    this.settledWaiters?.notifyAll();
    return true;
  }

  /** Drops what is cached of the database (another connection's commit, or a rollback of ours). */
  private dropCaches(): void {
    this.ids.forget();
    this.topicIds.forget();
    this.queues.invalidate();
    this.subscriptions.invalidate();
    this.topicLog.invalidate();
  }

  /**
   * Queues a write. The engine's own writes are replayable (they act outside the database only
   * through their hooks); the application's code in `tx` is not, and runs once.
   */
  private write<T>(
    fn: (ctx: WriteContext, now: number) => T,
    signal?: AbortSignal,
    replayable = true,
  ): Promise<T> {
    if (this.closing) return Promise.reject(new ClosedError());
    return this.writer.run((ctx) => fn(ctx, this.clock.now()), signal, replayable);
  }

  private read<T>(fn: () => T): Promise<T> {
    if (this.closing) return Promise.reject(new ClosedError());
    try {
      this.checkExternalChange();
      return Promise.resolve(fn());
    } catch (err) {
      // A read meets a corrupt page or a lock like a write does: the caller gets the named error.
      return Promise.reject(mapSqliteError(err));
    }
  }

  /**
   * A write made messages of `queues` claimable: parked receivers that can take them do so in this
   * same transaction (a hand-off, saving them a transaction and a wake-up), taking no more than
   * `budgets` counts for the queue when the write knows how many rows it made claimable; every
   * receiver still parked is woken after the commit.
   */
  private wake(
    ctx: WriteContext,
    queues: Iterable<string>,
    now: number,
    budgets?: ReadonlyMap<string, number>,
  ): void {
    for (const q of queues) {
      if (this.waiters.hasTakers(q))
        ctx.beforeCommit((c) => this.waiters.handOff(q, c, now, budgets?.get(q)));
    }
    ctx.afterCommit(() => {
      for (const q of queues) this.waiters.notify(q);
    });
  }

  /** What a write's verb announces, for after its commit (see `wake`). */
  private effectsOf(ctx: WriteContext, now: number): Effects {
    return {
      activated: (queue, count) =>
        this.wake(ctx, [queue], now, count === undefined ? undefined : new Map([[queue, count]])),
      scheduled: (at) => ctx.afterCommit(() => this.loops.armScheduler(at)),
      settled: (seqs) => this.notifySettled(ctx, [...seqs]),
      completed: (queue, n) => this.countCompleted(ctx, queue, n),
      sent: (queue, n) =>
        ctx.afterCommit(() => this.sentCounts.set(queue, (this.sentCounts.get(queue) ?? 0) + n)),
      filterFailed: (f) =>
        ctx.afterCommit(() =>
          this.logger.warn(f, "filter failed at run time; message not routed to this subscription"),
        ),
    };
  }

  // --- queues -----------------------------------------------------------------------------------

  createQueue(name: string, config?: QueueConfig): Promise<void> {
    try {
      requireName(name, "queue");
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write((_ctx, now) => {
      if (config?.kind === "subscription" && !this.queues.get(name) && !this.queues.isLiveTopic(name)) {
        // A backing queue without its subscription could never be deleted or unsubscribed.
        throw new InvalidArgumentError("mqlite: a subscription's backing queue is created by subscribe");
      }
      this.queues.upsert(name, config, now);
    });
  }

  deleteQueue(name: string): Promise<void> {
    return this.write(() => {
      const q = this.queues.require(name);
      if (q.kind === "subscription") {
        throw new NameConflictError(
          `mqlite: "${name}" is a subscription's backing queue; unsubscribe instead`,
        );
      }
      this.dropQueue(name);
    });
  }

  private dropQueue(name: string): void {
    this.queues.delete(name);
    for (const stmt of this.clearQueueAux) stmt.run(name);
  }

  listQueues(): Promise<QueueInfo[]> {
    return this.read(() => this.queues.list());
  }

  stats(queue: string): Promise<QueueStats> {
    return this.read(() => {
      this.queues.require(queue);
      const { oldest } = this.oldestRow.get(queue, queue) as { oldest: number | null };
      return statsFromCounts(queue, this.statsRows.all(queue) as CountRow[], oldest, this.clock.now());
    });
  }

  /** Rows completed by this process since it opened, per queue (for metrics). */
  completedCount(queue: string): number {
    return this.completedCounts.get(queue) ?? 0;
  }

  /** Messages stored into the queue by this process's sends since it opened (for the console's rates). */
  sentCount(queue: string): number {
    return this.sentCounts.get(queue) ?? 0;
  }

  private countCompleted(ctx: WriteContext, queue: string, n: number): void {
    if (n > 0)
      ctx.afterCommit(() => this.completedCounts.set(queue, (this.completedCounts.get(queue) ?? 0) + n));
  }

  // --- sending ----------------------------------------------------------------------------------

  /** Runs the send verb inside a write (the embedded `tx` and the flow and debounce verbs). */
  private sendIn(
    ctx: WriteContext,
    now: number,
    queue: string,
    messages: PreparedMessage[],
    at: SendAt,
  ): Sent {
    return runSync(sendVerb({ now, effects: this.effectsOf(ctx, now) }, queue, messages, at), this.ops);
  }

  /** Runs the application's SQL and sends in one transaction (the transactional outbox). `fn` is synchronous. */
  tx<T>(fn: (t: Transaction) => T): Promise<T> {
    return this.write(
      (ctx, now) => {
        const t: Transaction = {
          db: this.db,
          send: (queue, messages, options = {}) => {
            const at = sendAt(options);
            const prepared = prepareMessages(messages, this.maxMessageBytes);
            return this.sendIn(ctx, now, queue, prepared, at).seqs;
          },
        };
        return fn(t);
      },
      undefined,
      false,
    );
  }

  // --- receiving and settling -------------------------------------------------------------------

  async receive(queue: string, options: ReceiveOptions = {}): Promise<Message[]> {
    const max = clampCount(options.maxMessages, 1, MAX_RECEIVE);
    const wait = Math.min(Math.max(0, Math.trunc(options.waitMs ?? 0) || 0), MAX_WAIT_MS);
    const mode = options.mode ?? "peek-lock";
    if (mode !== "peek-lock" && mode !== "receive-and-delete") {
      throw new InvalidArgumentError(`mqlite: unknown receive mode "${mode}"`);
    }
    const attemptId = options.attemptId || undefined;
    const signal = options.signal;
    const claimIn = (now: number, limit = max) =>
      this.claimer.claim(this.queues.require(queue), Math.min(max, limit), mode, now, attemptId);
    const claim = () => this.write((_ctx, now) => claimIn(now), signal);
    const deadline = this.clock.now() + wait;
    for (;;) {
      const got = await claim();
      if (got.length > 0 || wait === 0) return got;
      const now = this.clock.now();
      if (now >= deadline || signal?.aborted) return [];
      // Once its own claim found nothing, a sender's transaction may claim for the parked receive
      // (a hand-off); armed only then, so the two never both claim (`max` holds).
      let armed = false;
      const take = (_ctx: WriteContext, at: number, limit: number) =>
        armed && !signal?.aborted ? claimIn(at, limit) : [];
      const waiter = this.waiters.wait(queue, deadline, now, signal, take);
      const again = await claim().catch((err) => {
        waiter.cancel();
        throw err;
      });
      if (again.length > 0) {
        waiter.cancel();
        return again;
      }
      armed = true;
      const woken = await waiter.woken;
      const taken = waiter.taken();
      if (taken) return taken;
      if (!woken) return [];
    }
  }

  receiveDeferred(queue: string, seqNumbers: number[]): Promise<Message[]> {
    return this.write((_ctx, now) =>
      this.claimer.claimDeferredBySeq(this.queues.require(queue), seqNumbers.map(seqNumber), now),
    );
  }

  /** Wakes `awaitSettled` for these messages once the transaction commits. */
  private notifySettled(ctx: WriteContext, seqs: number[]): void {
    if (seqs.length === 0) return;
    ctx.afterCommit(() => {
      for (const s of seqs) this.settledWaiters.notify(String(s));
    });
  }

  /** The consumer loop (one implementation for every broker: contract/consume.ts). */
  consume(queue: string, handler: ConsumeHandler, options?: ConsumeOptions): Consumer {
    return consume(this, queue, handler, options);
  }

  // --- inspecting and the dead-letter queue -----------------------------------------------------

  peek(queue: string, options: PeekOptions = {}): Promise<Message[]> {
    return this.read(() => {
      const max = clampCount(options.max, DEFAULT_PEEK, MAX_PEEK);
      const from = integer(options.fromSeq, "from_seq");
      let rows: MessageRow[];
      if (options.state) {
        if (!MESSAGE_STATES.includes(options.state)) return [];
        rows = this.peekRows.all(queue, options.state, from, max) as MessageRow[];
      } else {
        // One index range per state, merged: each is a seek, whatever the queue holds.
        rows = MESSAGE_STATES.flatMap(
          (s: MessageState) => this.peekRows.all(queue, s, from, max) as MessageRow[],
        )
          .sort((a, b) => a.id - b.id)
          .slice(0, max);
      }
      const out: Message[] = [];
      let bytes = 0;
      for (const row of rows) {
        out.push(peekedMessage(row));
        bytes += row.body.length + (row.properties?.length ?? 0);
        if (bytes >= RECEIVE_BODY_BUDGET) break;
      }
      return out;
    });
  }

  async redrive(queue: string, options: RedriveOptions = {}): Promise<number> {
    const max = nonNegative(options.max, "max");
    const olderThan = nonNegativeDuration(options.olderThanMs, "older_than_ms");
    const rate = nonNegative(options.ratePerSec, "rate_per_sec");
    const target = options.target && options.target !== queue ? options.target : undefined;
    const moveChunk = (limit: number) =>
      this.write((ctx, now) => {
        this.queues.require(queue);
        if (target !== undefined) this.queues.require(target);
        const ids = this.maintenance.deadLetters.select(
          queue,
          limit,
          olderThan > 0 ? now - olderThan : 0,
          options.seqNumbers,
        );
        const moved = this.maintenance.deadLetters.redrive(ids, target, now);
        if (moved > 0) ctx.afterCommit(() => this.waiters.notify(target ?? queue));
        return moved;
      });
    if (rate === 0) return moveChunk(max);
    let total = 0;
    for (;;) {
      const want = max > 0 ? Math.min(rate, max - total) : rate;
      if (want <= 0) return total;
      const moved = await moveChunk(want);
      total += moved;
      if (moved < want) return total;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  purge(queue: string, options: PurgeOptions = {}): Promise<number> {
    let max: number;
    let olderThan: number;
    try {
      max = nonNegative(options.max, "max");
      olderThan = nonNegativeDuration(options.olderThanMs, "older_than_ms");
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write((_ctx, now) => {
      this.queues.require(queue);
      return this.maintenance.deadLetters.purge(queue, max, olderThan > 0 ? now - olderThan : 0);
    });
  }

  // --- topics -----------------------------------------------------------------------------------

  subscribe(topic: string, name: string, options: SubscribeOptions = {}): Promise<void> {
    const filter = (options.filter ?? "").trim() === "" ? "" : (options.filter as string);
    try {
      requireName(topic, "topic");
      requireName(name, "subscription");
      if (topic === name)
        throw new NameConflictError("mqlite: a subscription cannot be named after its topic");
      if (filter) compileFilter(filter, this.logger, true);
      if (options.config) {
        const { kind: _ignored, ...rest } = options.config as QueueConfig;
        options = { ...options, config: rest };
      }
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write((_ctx, now) =>
      this.subscriptions.subscribeQueue(topic, name, filter, options.config, now),
    );
  }

  unsubscribe(topic: string, name: string): Promise<void> {
    return this.write(() => {
      const row = this.subscriptions.unsubscribe(topic, name);
      if (row.kind === "queue") this.dropQueue(name);
      if (row.kind === "log") {
        this.topicLog.dropSubscription(topic, name);
        if (this.subscriptions.logSubscriptionCount(topic) === 0 && !this.topicLog.declared(topic)) {
          this.topicLog.dropTopic(topic);
        }
      }
    });
  }

  pauseSubscription(topic: string, name: string): Promise<void> {
    return this.write((_ctx, now) => this.subscriptions.pause(topic, name, true, now));
  }

  resumeSubscription(topic: string, name: string): Promise<void> {
    return this.write((_ctx, now) => this.subscriptions.pause(topic, name, false, now));
  }

  listSubscriptions(): Promise<SubscriptionInfo[]> {
    return this.read(() => this.subscriptions.list());
  }

  testFilter(filter: string, sample?: FilterSample): Promise<TestFilterResult> {
    return this.read(() => testFilter(filter, sample, this.clock.now(), this.maxMessageBytes));
  }

  // --- job topics (TopicService) -----------------------------------------------------------------

  subscribeTask(topic: string, name: string, options: TaskSubscribeOptions): Promise<void> {
    let spec: ReturnType<typeof taskSpec>;
    try {
      requireName(topic, "topic");
      requireName(name, "subscription");
      spec = taskSpec(options, requireName, integer);
      if (spec.filter) compileFilter(spec.filter, this.logger, true);
      if (spec.queue === topic)
        throw new NameConflictError("mqlite: a topic cannot deliver to a queue of its own name");
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write((_ctx, now) => this.subscriptions.subscribeTask(topic, name, spec, now));
  }

  subscribeLog(topic: string, name: string, options: LogSubscribeOptions = {}): Promise<void> {
    const filter = (options.filter ?? "").trim() === "" ? "" : (options.filter as string);
    try {
      requireName(topic, "topic");
      requireName(name, "subscription");
      if (filter) compileFilter(filter, this.logger, true);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write((_ctx, now) => this.subscriptions.subscribeLog(topic, name, filter, now));
  }

  declareTopic(name: string, options: DeclareTopicOptions = {}): Promise<void> {
    let retention: number | null;
    try {
      requireName(name, "topic");
      retention =
        options.retentionMs === undefined || options.retentionMs === null
          ? null
          : nonNegativeDuration(options.retentionMs, "retention_ms");
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write((_ctx, now) => {
      if (this.queues.get(name)) throw new NameConflictError(`mqlite: "${name}" is the name of a queue`);
      this.topicLog.declare(name, retention, now);
    });
  }

  listDeclaredTopics(): Promise<EngineDeclaredTopic[]> {
    return this.read(() => this.topicLog.listDeclared());
  }

  readTopic(topic: string, name: string, options: ReadTopicOptions = {}): Promise<TopicLogMessage[]> {
    return this.read(() => {
      const limit = topicLimit(options.limit);
      const sub = this.subscriptions.row(topic, name);
      if (limit === 0 || !sub || sub.kind !== "log") return [];
      const target = this.subscriptions.targets(topic)?.find((t) => t.name === name);
      return this.topicLog.read(topic, sub.cursor, limit, this.clock.now(), target?.filter);
    });
  }

  ackTopic(topic: string, name: string, id: number): Promise<boolean> {
    return this.write(() => this.subscriptions.ack(topic, name, integer(id, "id")));
  }

  leaseTopic(topic: string, name: string, options: LeaseTopicOptions = {}): Promise<TopicLogMessage[]> {
    let visibility: number;
    try {
      visibility =
        options.visibilityMs === undefined
          ? DEFAULT_VISIBILITY_MS
          : nonNegativeDuration(options.visibilityMs, "visibility_ms");
    } catch (err) {
      return Promise.reject(err);
    }
    const limit = topicLimit(options.limit);
    return this.write((_ctx, now) => {
      const sub = this.subscriptions.row(topic, name);
      if (limit === 0 || !sub || sub.kind !== "log") return [];
      const target = this.subscriptions.targets(topic)?.find((t) => t.name === name);
      return this.topicLog.lease(topic, name, limit, visibility, now, target?.filter);
    });
  }

  ackMessage(topic: string, name: string, id: number): Promise<boolean> {
    return this.write(() => this.topicLog.ackMessage(topic, name, integer(id, "id")));
  }

  nackMessage(topic: string, name: string, id: number): Promise<boolean> {
    return this.write(() => this.topicLog.nackMessage(topic, name, integer(id, "id")));
  }

  topicStats(topic?: string): Promise<TopicBacklog[]> {
    return this.read(() => {
      const subs = this.subscriptions
        .rows()
        .filter((r) => r.kind === "task" && (topic === undefined || r.topic === topic));
      return topicBacklog(subs, this.topicCounts(topic));
    });
  }

  topicLogStats(topic?: string): Promise<EngineTopicLogStat[]> {
    return this.read(() => {
      const subs = this.subscriptions
        .rows()
        .filter((r) => r.kind === "log" && (topic === undefined || r.topic === topic));
      return this.topicLog.logStats(subs, this.clock.now());
    });
  }

  reapSubscriptions(options: ReapOptions = {}): Promise<number> {
    const liveness = options.livenessMs ?? EPHEMERAL_LIVENESS_MS;
    const grace = options.graceMs ?? EPHEMERAL_GRACE_MS;
    return this.write((_ctx, now) => this.subscriptions.reap(now - liveness, now - grace).length);
  }

  private topicCounts(topic: string | undefined): DeliveryCount[] {
    if (topic === undefined) {
      this.allTopicCounts ??= this.db.prepare(`
        SELECT topic, subscription, state, count(*) AS n, min(enqueued_at) AS oldest FROM messages
        WHERE topic IS NOT NULL GROUP BY topic, subscription, state`);
      return this.allTopicCounts.all() as DeliveryCount[];
    }
    this.oneTopicCounts ??= this.db.prepare(`
      SELECT topic, subscription, state, count(*) AS n, min(enqueued_at) AS oldest FROM messages
      WHERE topic = ? GROUP BY topic, subscription, state`);
    return this.oneTopicCounts.all(topic) as DeliveryCount[];
  }

  // --- the job face's capabilities (JobService) ------------------------------------------------

  pauseQueue(name: string): Promise<void> {
    return this.write(() => this.queues.setPaused(name, true));
  }

  resumeQueue(name: string): Promise<void> {
    return this.write((ctx) => {
      this.queues.setPaused(name, false);
      ctx.afterCommit(() => this.waiters.notify(name));
    });
  }

  receiveAny(queues: string[], options: ReceiveAnyOptions = {}): Promise<Message[]> {
    let leaseCapMs: number;
    try {
      if (!Array.isArray(queues)) throw new InvalidArgumentError("mqlite: queues must be a list");
      for (const q of queues) requireName(q, "queue");
      validateGates(options.gates);
      leaseCapMs = leaseCap(options.lockDurationMs);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.multiReceiver.receive({
      queues: [...new Set(queues)],
      max: clampCount(options.maxMessages, 1, MAX_RECEIVE),
      waitMs: Math.min(Math.max(0, Math.trunc(options.waitMs ?? 0) || 0), MAX_WAIT_MS),
      gates: options.gates ?? [],
      leaseCapMs,
      signal: options.signal,
    });
  }

  cancelMessage(queue: string, seq: number, options: CancelMessageOptions = {}): Promise<CancelOutcome> {
    let retain: number;
    try {
      retain = nonNegativeDuration(options.retainMs, "retain_ms");
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write((ctx, now) => {
      const s = seqNumber(seq);
      const outcome = this.records.cancel(queue, s, options.lockToken, retain, now);
      if (outcome === "cancelled") this.notifySettled(ctx, [s]);
      return outcome;
    });
  }

  setProgress(queue: string, seq: number, lockToken: string, progress: number): Promise<void> {
    let p: number;
    try {
      p = integer(progress, "progress");
      if (p < 0 || p > 100) throw new InvalidArgumentError("mqlite: progress must be within 0..100");
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write((_ctx, now) => this.records.setProgress(queue, seqNumber(seq), lockToken, p, now));
  }

  getMessages(seqNumbers: number[]): Promise<MessageRecord[]> {
    return this.read(() => this.records.get(seqNumbers.map(seqNumber)));
  }

  browse(options: BrowseOptions = {}): Promise<MessageRecord[]> {
    return this.read(() => this.records.browse(options));
  }

  messageErrors(seq: number): Promise<AttemptError[]> {
    return this.read(() => this.records.errors(seqNumber(seq)));
  }

  awaitSettled(
    seqNumbers: number[],
    options: { waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<number[]> {
    let seqs: number[];
    try {
      seqs = seqNumbers.map(seqNumber);
    } catch (err) {
      return Promise.reject(err);
    }
    const wait = Math.min(Math.max(0, Math.trunc(options.waitMs ?? 0) || 0), MAX_WAIT_MS);
    return awaitSettled(
      this.clock,
      this.settledWaiters,
      () => this.read(() => this.records.settled(seqs)),
      seqs,
      wait,
      options.signal,
    );
  }

  deleteSettled(queue: string, options: DeleteSettledOptions = {}): Promise<number> {
    return this.write((_ctx, now) => this.records.deleteSettled(queue, options, now));
  }

  promoteMessages(queue: string, seqNumbers: number[]): Promise<number> {
    let seqs: number[];
    try {
      seqs = seqNumberList(seqNumbers);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write((ctx, now) => {
      const promoted = this.records.promote(queue, seqs, now);
      if (promoted > 0) this.wake(ctx, [queue], now);
      return promoted;
    });
  }

  removeMessages(queue: string, seqNumbers: number[]): Promise<number> {
    let seqs: number[];
    try {
      seqs = seqNumberList(seqNumbers);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write((ctx, now) => {
      const removed = this.records.remove(queue, seqs, now);
      this.notifySettled(ctx, removed);
      return removed.length;
    });
  }

  heartbeat(worker: WorkerInfo, options: { staleAfterMs?: number } = {}): Promise<HeartbeatResult> {
    try {
      requireName(worker?.workerId, "worker");
    } catch (err) {
      return Promise.reject(err);
    }
    const stale =
      options.staleAfterMs && options.staleAfterMs > 0 ? options.staleAfterMs : DEFAULT_WORKER_STALE_MS;
    return this.write((_ctx, now) => this.workers.heartbeat(worker, stale, now));
  }

  listWorkers(): Promise<WorkerRecord[]> {
    return this.read(() => this.workers.list());
  }

  removeWorker(workerId: string): Promise<boolean> {
    return this.write(() => this.workers.delete(workerId));
  }

  acquireLock(name: string, owner: string, ttlMs: number): Promise<boolean> {
    try {
      requireName(name, "lock");
      requireName(owner, "lock owner");
      if (nonNegativeDuration(ttlMs, "ttl_ms") === 0)
        throw new InvalidArgumentError("mqlite: ttl_ms must be positive");
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write((_ctx, now) => this.locks.acquire(name, owner, ttlMs, now));
  }

  releaseLock(name: string, owner: string): Promise<boolean> {
    return this.write((_ctx, now) => this.locks.release(name, owner, now));
  }

  // --- the broker -------------------------------------------------------------------------------

  readiness(): Promise<Readiness> {
    if (this.closing)
      return Promise.resolve({ ready: false, reason: "closing", message: "mqlite: broker is closed" });
    return Promise.resolve(fileReadiness(this.location, this.writer.storeFailure));
  }

  status(): Promise<BrokerStatus> {
    return this.read(() => {
      const started = performance.now();
      let pingMs = -1;
      try {
        this.db.prepare("SELECT 1").get();
        pingMs = pingMsSince(started);
      } catch {
        pingMs = -1;
      }
      const memory = this.location === ":memory:";
      let size = 0;
      if (!memory) {
        for (const suffix of ["", "-wal", "-shm"]) {
          try {
            size += statSync(this.location + suffix).size;
          } catch {
            // absent
          }
        }
      }
      return {
        version: VERSION,
        backend: memory ? "memory" : "local file",
        remote: false,
        location: this.location,
        schemaVersion: String(LATEST_SCHEMA_VERSION),
        pingMs,
        dbSizeBytes: size,
        queues: this.queues.list().filter((q) => q.kind === "queue").length,
        subscriptions: this.subscriptions.count(),
        uptimeMs: this.clock.now() - this.openedAt,
        auth: false,
        synchronous: SYNC_NAMES[this.db.pragma("synchronous", { simple: true }) as number] ?? "unknown",
      };
    });
  }

  /**
   * Runs every background step once, now: reaper, scheduler, TTL sweep, janitors, DLQ retention,
   * reclaim. For tests with a manual clock and the loops switched off.
   */
  async runMaintenanceOnce(): Promise<MaintenanceResult> {
    const out = emptyResult();
    for (const step of ["reap", "schedule", "expire", "janitor", "retention"] as const) {
      const r = await this.runMaintenanceStep(step);
      mergeResult(out, r);
    }
    if (this.location !== ":memory:") this.maintenance.reclaim();
    return out;
  }

  private runMaintenanceStep(
    step: "reap" | "schedule" | "expire" | "janitor" | "retention",
  ): Promise<MaintenanceResult> {
    return this.write((ctx, now) => {
      const out = emptyResult();
      if (step === "reap") this.maintenance.reap(now, out);
      else if (step === "schedule") this.maintenance.schedule(now, out);
      else if (step === "expire") {
        this.maintenance.expire(now, out);
        out.retainedDropped += this.records.sweepRetained(now);
        this.locks.sweep(now);
      } else if (step === "janitor") this.maintenance.janitor(now, out);
      else {
        this.maintenance.retention(this.dlqBounds, now, out);
        out.retentionDropped += this.topicLog.compact(now, TOPIC_PURGE_LIMIT);
      }
      if (out.activated.size > 0) this.wake(ctx, out.activated, now);
      this.notifySettled(ctx, out.settled);
      return out;
    });
  }

  close(): Promise<void> {
    if (!this.closing) {
      this.closing = (async () => {
        this.loops.stop();
        this.waiters.close();
        this.settledWaiters.close();
        await this.writer.close();
        if (this.ids.holding || this.topicIds.holding) {
          try {
            this.writer.runNow(() => {
              this.ids.release();
              this.topicIds.release();
            });
          } catch {
            // Not given back (the file is busy or gone): a gap in the numbers, nothing lost.
          }
        }
        // Its connection closes first, so ours is the last and removes the WAL.
        await this.checkpoints?.close();
        this.db.close();
      })();
    }
    return this.closing;
  }

  // --- flows, message logs and the event log ------------------------------------------------------

  private flowDeps: Dependencies | undefined;
  private logLines: MessageLogs | undefined;
  private eventLog: EventLog | undefined;

  private get dependencyTable(): Dependencies {
    this.flowDeps ??= new Dependencies(this.db);
    return this.flowDeps;
  }

  private get messageLogs(): MessageLogs {
    this.logLines ??= new MessageLogs(this.db);
    return this.logLines;
  }

  private get events(): EventLog {
    this.eventLog ??= new EventLog(this.db);
    return this.eventLog;
  }

  sendFlow(nodes: FlowNode[]): Promise<number[]> {
    let prepared: PreparedFlowNode[];
    try {
      prepared = prepareFlow(nodes, this.maxMessageBytes);
    } catch (err) {
      return Promise.reject(err);
    }
    const waiting = waitingNodes(prepared);
    return this.write((ctx, now) => {
      const seqs: number[] = [];
      for (const [i, n] of prepared.entries()) {
        if (this.queues.get(n.queue)?.kind !== "queue")
          throw new NotFoundError(`mqlite: queue not found: ${n.queue}`);
        const out = this.sendIn(ctx, now, n.queue, [n.message], { scheduledAt: 0, ttlMs: 0 });
        if (out.stored === 0)
          throw new InvalidArgumentError("mqlite: a flow node matched a live message (unique key or dedup)");
        const seq = out.seqs[0]!;
        seqs.push(seq);
        if (waiting.has(i)) this.dependencyTable.hold(seq);
        if (n.parent !== undefined) this.dependencyTable.add(seq, seqs[n.parent]!, n.failParent);
      }
      return seqs;
    });
  }

  releaseDependents(seqNumbers?: number[]): Promise<number> {
    let children: number[] | undefined;
    try {
      if (seqNumbers !== undefined) {
        if (!Array.isArray(seqNumbers)) throw new InvalidArgumentError("mqlite: seq_numbers must be a list");
        children = seqNumbers.map(seqNumber);
        if (children.length === 0) return Promise.resolve(0);
      }
    } catch (err) {
      return Promise.reject(err);
    }
    if (children === undefined) {
      // The sweep: find them with a read, so that an idle sweep never takes the writer.
      return this.read(() => this.dependencyTable.settledChildren()).then((found) =>
        found.length > 0 ? this.releaseDependents(found) : 0,
      );
    }
    const list = children;
    return this.write((ctx, now) => {
      const out = this.dependencyTable.release(list, now);
      if (out.activated.size > 0) this.wake(ctx, [...out.activated.keys()], now, out.activated);
      this.notifySettled(ctx, out.failed);
      let n = out.failed.length;
      for (const c of out.activated.values()) n += c;
      return n;
    });
  }

  dependencies(seq: number): Promise<Dependency[]> {
    return this.read(() => this.dependencyTable.list(seqNumber(seq)));
  }

  appendMessageLog(queue: string, seq: number, lockToken: string, lines: string[]): Promise<number> {
    try {
      checkLogLines(lines);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write((_ctx, now) => this.messageLogs.append(queue, seqNumber(seq), lockToken, lines, now));
  }

  messageLog(seq: number, options?: { offset?: number; limit?: number }): Promise<MessageLogPage> {
    return this.read(() => {
      const { offset, limit } = logPage(options);
      return this.messageLogs.read(seqNumber(seq), offset, limit);
    });
  }

  appendEvents(events: EventInput[]): Promise<void> {
    try {
      checkEvents(events);
    } catch (err) {
      return Promise.reject(err);
    }
    if (events.length === 0) return Promise.resolve();
    return this.write((_ctx, now) => this.events.append(events, now));
  }

  readEvents(afterId: number, options: { limit?: number } = {}): Promise<EventPage> {
    return this.read(() => this.events.read(integer(afterId, "after_id"), eventLimit(options.limit)));
  }

  // --- job metrics and debounced sends ------------------------------------------------------------

  private metricsTable: JobMetrics | undefined;

  private get jobMetrics(): JobMetrics {
    this.metricsTable ??= new JobMetrics(this.db);
    return this.metricsTable;
  }

  addMetrics(increments: MetricIncrement[]): Promise<void> {
    let merged: MetricIncrement[];
    try {
      merged = checkIncrements(increments);
    } catch (err) {
      return Promise.reject(err);
    }
    if (merged.length === 0) return Promise.resolve();
    return this.write((_ctx, now) => this.jobMetrics.add(merged, now));
  }

  readMetrics(kind: MetricKind, query?: MetricsQuery): Promise<MetricPoint[]> {
    try {
      const k = metricKind(kind);
      const range = metricsRange(query, this.clock.now());
      return this.read(() => this.jobMetrics.read(k, range));
    } catch (err) {
      return Promise.reject(err);
    }
  }
}

/** A read's or lease's limit: absent 100, ≤0 nothing, at most 1000. */
function topicLimit(limit: number | undefined): number {
  if (limit === undefined || limit === null) return DEFAULT_TOPIC_READ;
  const n = Math.trunc(Number(limit));
  if (!Number.isFinite(n) || n <= 0) return 0;
  return Math.min(n, MAX_TOPIC_READ);
}

function mergeResult(into: MaintenanceResult, from: MaintenanceResult): void {
  for (const q of from.activated) into.activated.add(q);
  into.requeued += from.requeued;
  into.deadLettered += from.deadLettered;
  into.scheduledActivated += from.scheduledActivated;
  into.expired += from.expired;
  into.dedupDropped += from.dedupDropped;
  into.auxDropped += from.auxDropped;
  into.retentionDropped += from.retentionDropped;
  into.retainedDropped += from.retainedDropped;
  into.settled.push(...from.settled);
}
