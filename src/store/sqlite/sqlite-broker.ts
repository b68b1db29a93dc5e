import { statSync } from "node:fs";
import type { Broker } from "../../contract/broker.js";
import { type ConsumeHandler, type ConsumeOptions, type Consumer, consume } from "../../contract/consume.js";
import {
  AlreadyExistsError,
  ClosedError,
  InvalidArgumentError,
  NameConflictError,
  NotFoundError,
} from "../../contract/errors.js";
import type { DebouncedSend, DebounceOptions, Dependency, FlowNode } from "../../contract/job-service.js";
import { type Logger, stderrLogger } from "../../contract/logger.js";
import { messageOf } from "../../contract/message-of.js";
import type { Delivery, PublishResult } from "../../contract/topic-service.js";
import type { BrokerStatus, Message, OutgoingMessage, Readiness, SendOptions } from "../../contract/types.js";
import type { Clock } from "../../core/clock.js";
import { systemClock } from "../../core/clock.js";
import { CoreBroker } from "../../core/core-broker.js";
import { type DlqBounds, NO_DLQ_BOUNDS } from "../../core/dlq-bounds.js";
import { byCreation, taskDelivery } from "../../core/fanout.js";
import { compileFilter, filterMessage } from "../../core/filters.js";
import { type PreparedFlowNode, prepareFlow, waitingNodes } from "../../core/flow-input.js";
import type { Loops } from "../../core/loops.js";
import type { MaintenanceResult } from "../../core/maintenance-result.js";
import { checkDebounce } from "../../core/metrics-input.js";
import { type PreparedMessage, prepareMessages } from "../../core/outgoing.js";
import { pingMsSince } from "../../core/ping.js";
import {
  type Dialect,
  type Effects,
  type Ops,
  runSync,
  type Verb,
  type WriteScope,
} from "../../core/port.js";
import type { Target } from "../../core/subscription-rows.js";
import { integer, nonNegativeDuration, requireName, seqNumber } from "../../core/validate.js";
import type { Claimed } from "../../core/verbs/claim.js";
import { recoverLeases } from "../../core/verbs/maintenance.js";
import { type Take, Waiters } from "../../core/waiters.js";
import type { WriteContext } from "../../core/write-context.js";
import type { FilterMessage } from "../../filter/index.js";
import { VERSION } from "../../version.js";
import { type CheckpointedFile, checkpointInBackground } from "./checkpointer.js";
import { SqliteClaimOps } from "./claim.js";
import { isMemoryPath, normalizePath, openDatabase, type SqliteDatabase } from "./database.js";
import { DebounceWindows } from "./debounce-windows.js";
import { Dependencies } from "./dependencies.js";
import { SqliteFlowOps } from "./flow-ops.js";
import { type InsertTiming, MessageInserter, type RowToInsert } from "./insert.js";
import { SqliteNamedLockOps } from "./locks.js";
import { reclaimFreePages, SqliteMaintenanceOps } from "./maintenance.js";
import { SqliteRecordOps } from "./message-records.js";
import { LATEST_SCHEMA_VERSION } from "./migrations/index.js";
import { SqliteQueueOps } from "./queue-ops.js";
import { QueueRegistry } from "./queue-registry.js";
import { fileReadiness } from "./readiness.js";
import { SequenceNumbers } from "./sequence-numbers.js";
import { SqliteSettleOps } from "./settle.js";
import { mapSqliteError } from "./sqlite-errors.js";
import { Subscriptions } from "./subscriptions.js";
import type { SyncMode } from "./sync-mode.js";
import { TopicLog } from "./topic-log.js";
import { SqliteTopicOps } from "./topics.js";
import { SqliteWorkerOps } from "./workers.js";
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

/** The outcome of sending one batch: a seq per message, 0 for none. */
/** `PRAGMA synchronous` values by number. */
const SYNC_NAMES = ["off", "normal", "full", "extra"];

interface SendOutcome {
  seqs: number[];
  /** The queues the send made rows claimable in, and how many (a hand-off takes no more). */
  activated: Map<string, number>;
  scheduledFor: number[];
  /** Messages stored per queue (for the sent counters). */
  stored: Map<string, number>;
  /** Per message: what a publish to a topic made of it. */
  published: PublishResult[];
  /** Filters that failed at run time (logged once the send commits, so a replayed group logs once). */
  filterFailures: { topic: string; subscription: string; err: string }[];
}

/** A single-message send whose id was seen with another body within the dedup window. */
const dedupConflict = () =>
  new AlreadyExistsError(
    "mqlite: a message with this id and a different body was sent within the dedup window",
  );

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
  private readonly ids: SequenceNumbers;
  private readonly topicIds: SequenceNumbers;
  private readonly inserter: MessageInserter;
  private readonly claimOps: SqliteClaimOps;
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
  private readonly maintenanceOps: SqliteMaintenanceOps;
  private readonly loops: Loops;
  protected readonly waiters: Waiters<Message>;
  private readonly logger: Logger;
  protected readonly maxMessageBytes: number;
  protected readonly dlqBounds: DlqBounds;
  private readonly openedAt: number;
  private readonly dataVersion;
  private lastDataVersion = 0;
  private closing: Promise<void> | undefined;
  /** Copies committed pages into the file off the event loop (file-backed, shared files only). */
  private readonly checkpoints: CheckpointedFile | undefined;
  private readonly completedCounts = new Map<string, number>();
  private readonly sentCounts = new Map<string, number>();
  private readonly records: SqliteRecordOps;
  private readonly locks: SqliteNamedLockOps;
  /** Wake-ups of `awaitSettled`, keyed by sequence number. */
  protected readonly settledWaiters: Waiters;

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
    this.subscriptions = new Subscriptions(this.db, (source) => compileFilter(source, this.logger));
    this.ids = new SequenceNumbers(this.db, "messages");
    this.topicIds = new SequenceNumbers(this.db, "topic_messages");
    this.topicLog = new TopicLog(this.db, this.topicIds);
    this.inserter = new MessageInserter(this.db, this.ids);
    this.claimOps = new SqliteClaimOps(this.db, this.queues);
    this.settleOps = new SqliteSettleOps(this.db, this.queues);
    this.maintenanceOps = new SqliteMaintenanceOps(this.db, this.ids, this.queues, this.topicLog);
    this.records = new SqliteRecordOps(this.db);
    this.locks = new SqliteNamedLockOps(this.db);
    this.ops = {
      settle: this.settleOps,
      claim: this.claimOps,
      send: {},
      queues: new SqliteQueueOps(this.db, this.queues, this.subscriptions, this.topicLog),
      topics: new SqliteTopicOps(this.db, this.topicLog, this.queues, this.subscriptions),
      maintenance: this.maintenanceOps,
      records: this.records,
      workers: new SqliteWorkerOps(this.db),
      locks: this.locks,
      flows: new SqliteFlowOps(this.db),
    };
    this.writer = new Writer(
      this.db,
      () => this.checkExternalChange(),
      () => this.dropCaches(),
      () => this.checkpoints?.nudge(),
    );
    this.waiters = new Waiters<Message>(() => this.checkExternalChange());
    this.settledWaiters = new Waiters(() => this.checkExternalChange());
    // Crash recovery: only leases that have lapsed (another live process may hold the rest).
    this.writer.runNow(() => runSync(recoverLeases(this.clock.now()), this.ops));
    // Last: nothing below can fail and leave the thread a connection to a file no broker holds.
    if (options.checkpointThread !== false && !isMemoryPath(path) && !options.exclusive) {
      this.checkpoints = this.startCheckpoints(options.synchronous ?? "normal");
    }
    this.loops = this.maintenanceLoops({
      clock: this.clock,
      reclaim: isMemoryPath(path) ? undefined : () => reclaimFreePages(this.db),
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
      leased: (at) => this.loops.armReaper(at),
    };
  }

  /** A parked receiver claims in the sender's transaction (run from `wake`'s before-commit hook). */
  protected override handOff(claim: (s: WriteScope, limit: number) => Verb<Claimed>): Take<Message> {
    return (ctx, now, limit) =>
      runSync(claim({ now, effects: this.effectsOf(ctx, now) }, limit), this.ops).messages;
  }

  // --- queues -----------------------------------------------------------------------------------

  /** Rows completed by this process since it opened, per queue (for metrics). */
  completedCount(queue: string): number {
    return this.completedCounts.get(queue) ?? 0;
  }

  /** Messages stored into the queue by this process's sends since it opened (for the console's rates). */
  sentCount(queue: string): number {
    return this.sentCounts.get(queue) ?? 0;
  }

  private countSent(out: SendOutcome): void {
    for (const [queue, n] of out.stored) this.sentCounts.set(queue, (this.sentCounts.get(queue) ?? 0) + n);
  }

  private countCompleted(ctx: WriteContext, queue: string, n: number): void {
    if (n > 0)
      ctx.afterCommit(() => this.completedCounts.set(queue, (this.completedCounts.get(queue) ?? 0) + n));
  }

  // --- sending ----------------------------------------------------------------------------------

  send(
    queue: string,
    messages: OutgoingMessage | OutgoingMessage[],
    options: SendOptions = {},
  ): Promise<number[]> {
    let prepared: PreparedMessage[];
    let scheduledAt: number;
    let ttlMs: number;
    try {
      scheduledAt = integer(options.scheduledAt, "scheduled_enqueue_time_ms");
      if (scheduledAt < 0)
        throw new InvalidArgumentError("mqlite: scheduled_enqueue_time_ms must not be negative");
      ttlMs = nonNegativeDuration(options.ttlMs, "ttl_ms");
      prepared = prepareMessages(messages, this.maxMessageBytes);
    } catch (err) {
      return Promise.reject(err);
    }
    if (prepared.length === 0) return Promise.resolve([]);
    return this.write((ctx, now) => this.sendIn(ctx, queue, prepared, scheduledAt, ttlMs, now).seqs);
  }

  schedule(
    queue: string,
    messages: OutgoingMessage | OutgoingMessage[],
    scheduledAt: number,
    options: Omit<SendOptions, "scheduledAt"> = {},
  ): Promise<number[]> {
    return this.send(queue, messages, { ...options, scheduledAt });
  }

  /** Sends inside a write and arranges what follows its commit: wake-ups, the scheduler, counters, warnings. */
  private sendIn(
    ctx: WriteContext,
    name: string,
    messages: PreparedMessage[],
    scheduledAt: number,
    ttlMs: number,
    now: number,
  ): SendOutcome {
    const out = this.sendPrepared(name, messages, scheduledAt, ttlMs, now);
    this.wake(ctx, [...out.activated.keys()], now, out.activated);
    ctx.afterCommit(() => {
      for (const at of out.scheduledFor) this.loops.armScheduler(at);
      this.countSent(out);
      for (const f of out.filterFailures) {
        this.logger.warn(f, "filter failed at run time; message not routed to this subscription");
      }
    });
    return out;
  }

  /**
   * The one publish path, inside the write transaction: a plain queue stores each message; a topic
   * fans each message out to its matching subscriptions (a copy per queue subscription, a job per
   * task subscription) and stores it once in its log when an active log subscription takes it or
   * the topic is declared.
   */
  private sendPrepared(
    name: string,
    messages: PreparedMessage[],
    scheduledAt: number,
    ttlMs: number,
    now: number,
  ): SendOutcome {
    if (scheduledAt > 0 && scheduledAt <= now) {
      throw new InvalidArgumentError("mqlite: scheduled_enqueue_time_ms must be in the future");
    }
    const visibleAt = scheduledAt > 0 ? scheduledAt : now;
    const targets = this.subscriptions.targets(name);
    const declared = targets || !this.queues.get(name) ? this.topicLog.declared(name) : undefined;
    const single = messages.length === 1;
    const out: SendOutcome = {
      seqs: [],
      activated: new Map(),
      scheduledFor: [],
      stored: new Map(),
      published: [],
      filterFailures: [],
    };
    const timing = { now, visibleAt, ttlMs };
    const isTopic = targets !== undefined || declared !== undefined;
    if (!isTopic) return this.sendToQueue(name, messages, timing, out);
    for (const m of messages) {
      const at = m.delayMs > 0 ? { ...timing, visibleAt: Math.max(visibleAt, now + m.delayMs) } : timing;
      const result: PublishResult = { deliveries: [] };
      // The copies the subscriptions take, in their order; then stored together.
      const copies: (RowToInsert & { kind: "queue" | "task"; sub: string })[] = [];
      let toLog = false;
      // One filter input per message: the subscriptions' filters share its decoded body.
      const input = filterMessage(m, now, at.visibleAt);
      for (const t of targets ?? []) {
        if (!this.accepts(t, input, out)) continue;
        if (t.kind === "queue") {
          copies.push({ queue: this.queues.require(t.name), m, t: at, kind: "queue", sub: t.name });
        } else if (t.kind === "task") {
          const qName = t.queue ?? "";
          if (!this.queues.get(qName)) this.queues.upsert(qName, undefined, now);
          const origin = { topic: name, subscription: t.name };
          const copy = taskDelivery(m, t);
          copies.push({
            queue: this.queues.require(qName),
            m: copy,
            t: at,
            origin,
            kind: "task",
            sub: t.name,
          });
        } else toLog = true;
      }
      const many = copies.length > 1 ? this.inserter.insertRows(copies) : undefined;
      let slot = 0;
      let conflict = false;
      copies.forEach((c, i) => {
        const r = many ? many[i]! : this.inserter.insert(c.queue, c.m, c.t, c.origin);
        if (r.kind === "conflict") {
          conflict = true;
          return;
        }
        slot = r.seq;
        const d: Delivery = { subscription: c.sub, kind: c.kind, queue: c.queue.name, seqNumber: r.seq };
        if (r.kind === "duplicate") d.duplicate = true;
        result.deliveries.push(d);
        if (r.kind === "inserted") {
          out.stored.set(c.queue.name, (out.stored.get(c.queue.name) ?? 0) + 1);
          if (r.state === "active")
            out.activated.set(c.queue.name, (out.activated.get(c.queue.name) ?? 0) + 1);
          else out.scheduledFor.push(r.visibleAt);
        }
      });
      if (toLog || declared) {
        let expiresAt = ttlMs > 0 ? now + ttlMs : 0;
        if (
          expiresAt === 0 &&
          !toLog &&
          declared?.retention_ms !== null &&
          declared?.retention_ms !== undefined
        ) {
          expiresAt = now + declared.retention_ms;
        }
        result.logId = this.topicLog.append(name, m, now, expiresAt);
      }
      if (single && conflict && slot === 0) throw dedupConflict();
      out.seqs.push(slot);
      if (targets) byCreation(result.deliveries, targets);
      out.published.push(result);
    }
    return out;
  }

  /**
   * A send to a plain queue: the per-message work of a send, without fan-out's bookkeeping (and no
   * `published`: only a publish reads it, and a publish to a queue is refused).
   */
  private sendToQueue(
    name: string,
    messages: PreparedMessage[],
    timing: InsertTiming,
    out: SendOutcome,
  ): SendOutcome {
    const q = this.queues.get(name);
    if (!q) throw new NotFoundError("mqlite: queue not found");
    const at = (m: PreparedMessage): InsertTiming =>
      m.delayMs > 0 ? { ...timing, visibleAt: Math.max(timing.visibleAt, timing.now + m.delayMs) } : timing;
    const many =
      messages.length > 1
        ? this.inserter.insertRows(messages.map((m) => ({ queue: q, m, t: at(m) })))
        : undefined;
    let stored = 0;
    for (let i = 0; i < messages.length; i++) {
      const r = many ? many[i]! : this.inserter.insert(q, messages[i]!, at(messages[i]!));
      if (r.kind === "conflict") {
        if (messages.length === 1) throw dedupConflict();
        out.seqs.push(0);
      } else {
        out.seqs.push(r.seq);
        if (r.kind === "inserted") {
          stored++;
          if (r.state === "scheduled") out.scheduledFor.push(r.visibleAt);
        }
      }
    }
    if (stored > 0) out.stored.set(name, stored);
    if (stored > out.scheduledFor.length) out.activated.set(name, stored - out.scheduledFor.length);
    return out;
  }

  /** Whether a subscription takes a copy: not paused, and its filter says yes (fail-closed). */
  private accepts(t: Target, input: FilterMessage, out: SendOutcome): boolean {
    if (t.paused) return false;
    if (!t.filter) return true;
    return t.filter.matches(input, (err) =>
      out.filterFailures.push({ topic: t.topic, subscription: t.name, err: err.message }),
    );
  }

  cancel(queue: string, seq: number): Promise<void> {
    return this.write(() => {
      if (!this.settleOps.cancel(queue, seqNumber(seq))) {
        throw new NotFoundError("mqlite: no scheduled, never-delivered message with that seq_number");
      }
    });
  }

  /** Runs the application's SQL and sends in one transaction (the transactional outbox). `fn` is synchronous. */
  tx<T>(fn: (t: Transaction) => T): Promise<T> {
    return this.write(
      (ctx, now) => {
        const t: Transaction = {
          db: this.db,
          send: (queue, messages, options = {}) => {
            const scheduledAt = integer(options.scheduledAt, "scheduled_enqueue_time_ms");
            const ttlMs = nonNegativeDuration(options.ttlMs, "ttl_ms");
            const prepared = prepareMessages(messages, this.maxMessageBytes);
            return this.sendIn(ctx, queue, prepared, scheduledAt, ttlMs, now).seqs;
          },
        };
        return fn(t);
      },
      undefined,
      false,
    );
  }

  // --- receiving and settling -------------------------------------------------------------------

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

  // --- topics -----------------------------------------------------------------------------------

  // --- job topics (TopicService) -----------------------------------------------------------------

  publish(topic: string, message: OutgoingMessage, options: SendOptions = {}): Promise<PublishResult> {
    let prepared: PreparedMessage[];
    let scheduledAt: number;
    let ttlMs: number;
    try {
      requireName(topic, "topic");
      scheduledAt = integer(options.scheduledAt, "scheduled_enqueue_time_ms");
      if (scheduledAt < 0)
        throw new InvalidArgumentError("mqlite: scheduled_enqueue_time_ms must not be negative");
      ttlMs = nonNegativeDuration(options.ttlMs, "ttl_ms");
      if (Array.isArray(message)) throw new InvalidArgumentError("mqlite: publish takes one message");
      prepared = prepareMessages(message, this.maxMessageBytes);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write((ctx, now) => {
      if (this.queues.get(topic)) throw new NameConflictError(`mqlite: "${topic}" is a queue, not a topic`);
      return this.sendIn(ctx, topic, prepared, scheduledAt, ttlMs, now).published[0]!;
    });
  }

  // --- the job face's capabilities (JobService) ------------------------------------------------

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

  /** Every background step once (see `CoreBroker`), then gives free pages back to the file system. */
  override async runMaintenanceOnce(): Promise<MaintenanceResult> {
    const out = await super.runMaintenanceOnce();
    if (this.location !== ":memory:") reclaimFreePages(this.db);
    return out;
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

  // --- flows -------------------------------------------------------------------------------------

  private flowDeps: Dependencies | undefined;

  private get dependencyTable(): Dependencies {
    this.flowDeps ??= new Dependencies(this.db);
    return this.flowDeps;
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
        const out = this.sendIn(ctx, n.queue, [n.message], 0, 0, now);
        if (out.stored.size === 0)
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

  // --- debounced sends ---------------------------------------------------------------------------

  private windows: DebounceWindows | undefined;

  private get debounceWindows(): DebounceWindows {
    this.windows ??= new DebounceWindows(this.db);
    return this.windows;
  }

  sendDebounced(queue: string, message: OutgoingMessage, options: DebounceOptions): Promise<DebouncedSend> {
    let d: Required<DebounceOptions>;
    let m: PreparedMessage;
    try {
      d = checkDebounce(options);
      m = { ...prepareMessages(message, this.maxMessageBytes)[0]!, delayMs: 0, uniqueKey: null };
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write((ctx, now) => {
      if (this.queues.get(queue)?.kind !== "queue")
        throw new NotFoundError(`mqlite: queue not found: ${queue}`);
      const moved = this.debounceWindows.slide(queue, d, m.body, now);
      if (moved) {
        ctx.afterCommit(() => this.loops.armScheduler(moved.at));
        return { seqNumber: moved.seq, created: false };
      }
      const out = this.sendIn(ctx, queue, [m], now + d.windowMs, 0, now);
      if (out.stored.size === 0)
        throw new InvalidArgumentError("mqlite: a debounced send matched a live message (dedup)");
      const seq = out.seqs[0]!;
      this.debounceWindows.opened(queue, d.key, seq, now);
      return { seqNumber: seq, created: true };
    });
  }
}
