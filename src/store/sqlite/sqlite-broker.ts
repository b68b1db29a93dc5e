import { statSync } from "node:fs";
import type { Broker } from "../../contract/broker.js";
import { ClosedError } from "../../contract/errors.js";
import { type Logger, stderrLogger } from "../../contract/logger.js";
import { messageOf } from "../../contract/message-of.js";
import type { BrokerStatus, Message, OutgoingMessage, Readiness, SendOptions } from "../../contract/types.js";
import type { Clock } from "../../core/clock.js";
import { systemClock } from "../../core/clock.js";
import { CoreBroker } from "../../core/core-broker.js";
import { type DlqBounds, NO_DLQ_BOUNDS } from "../../core/dlq-bounds.js";
import { compileFilter } from "../../core/filters.js";
import type { Loops } from "../../core/loops.js";
import type { MaintenanceResult } from "../../core/maintenance-result.js";
import { type PreparedMessage, prepareMessages } from "../../core/outgoing.js";
import { pingMsSince } from "../../core/ping.js";
import {
  type Dialect,
  type Effects,
  type Ops,
  runSync,
  stepsOf,
  type Verb,
  type WriteScope,
} from "../../core/port.js";
import type { QueueRow } from "../../core/queue-config.js";
import type { Claimed } from "../../core/verbs/claim.js";
import { recoverLeases } from "../../core/verbs/maintenance.js";
import { type SendAt, type Sent, sendAt, send as sendVerb } from "../../core/verbs/send.js";
import { type Take, Waiters } from "../../core/waiters.js";
import type { WriteContext } from "../../core/write-context.js";
import { VERSION } from "../../version.js";
import { type CheckpointedFile, checkpointInBackground } from "./checkpointer.js";
import { SqliteClaimOps } from "./claim.js";
import {
  isMemoryPath,
  normalizePath,
  openDatabase,
  type SqliteDatabase,
  WAL_AUTOCHECKPOINT_FRAMES,
} from "./database.js";
import { SqliteDependencyOps } from "./dependencies.js";
import { SqliteFlowOps } from "./flow-ops.js";
import { FreePageReclaimer } from "./free-page-reclaimer.js";
import { SqliteNamedLockOps } from "./locks.js";
import { SqliteMaintenanceOps } from "./maintenance.js";
import { SqliteRecordOps } from "./message-records.js";
import { LATEST_SCHEMA_VERSION } from "./migrations/index.js";
import { QueueCounter } from "./queue-counter.js";
import { SqliteQueueOps } from "./queue-ops.js";
import { QueueRegistry } from "./queue-registry.js";
import { fileReadiness } from "./readiness.js";
import { SqliteSendOps } from "./send.js";
import { SequenceNumbers } from "./sequence-numbers.js";
import { SqliteSettleOps } from "./settle.js";
import { mapSqliteError } from "./sqlite-errors.js";
import { Subscriptions } from "./subscriptions.js";
import type { SyncMode } from "./sync-mode.js";
import { TopicLog } from "./topic-log.js";
import { SqliteTopicOps } from "./topics.js";
import { SqliteWorkerOps } from "./workers.js";
import { type EffectTargets, WriteEffects } from "./write-effects.js";
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
  private readonly ids: SequenceNumbers;
  private readonly topicIds: SequenceNumbers;
  private readonly claimOps: SqliteClaimOps;
  private readonly settleOps: SqliteSettleOps;
  private readonly ops: Ops;
  protected readonly dialect: Dialect = {
    stepsHoldTheLoop: true,
    write: (verb, options) =>
      options?.long
        ? this.writeLong(
            (ctx, now) => stepsOf(verb({ now, effects: this.effectsOf(ctx, now) }), this.ops),
            options.signal,
          )
        : this.write(
            (ctx, now) => runSync(verb({ now, effects: this.effectsOf(ctx, now) }), this.ops),
            options?.signal,
          ),
    read: (verb, options) =>
      options?.sliced
        ? this.readSliced(() => stepsOf(verb(this.clock.now()), this.ops))
        : this.read(() => runSync(verb(this.clock.now()), this.ops)),
  };
  private readonly maintenanceOps: SqliteMaintenanceOps;
  protected readonly loops: Loops;
  protected readonly waiters: Waiters<Message>;
  private readonly logger: Logger;
  protected readonly maxMessageBytes: number;
  protected readonly dlqBounds: DlqBounds;
  private readonly openedAt: number;
  private readonly dataVersion;
  private lastDataVersion = 0;
  /** Copies committed pages into the file off the event loop (file-backed, shared files only). */
  private readonly checkpoints: CheckpointedFile | undefined;
  /** Gives free pages back to the file system (not for in-memory databases). */
  private readonly reclaimer: FreePageReclaimer | undefined;
  private readonly completedCounts = new Map<string, number>();
  private readonly sentCounts = new Map<string, number>();
  private readonly records: SqliteRecordOps;
  private readonly locks: SqliteNamedLockOps;
  private readonly effectTargets: EffectTargets;
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
    const counts = new QueueCounter(this.db);
    this.claimOps = new SqliteClaimOps(this.db, this.queues, counts);
    this.settleOps = new SqliteSettleOps(this.db, this.queues);
    this.maintenanceOps = new SqliteMaintenanceOps(this.db, this.ids, this.queues, this.topicLog, counts);
    this.records = new SqliteRecordOps(this.db);
    this.locks = new SqliteNamedLockOps(this.db);
    this.ops = {
      settle: this.settleOps,
      claim: this.claimOps,
      send: new SqliteSendOps(this.db, this.ids, this.queues, this.subscriptions, this.topicLog, counts),
      queues: new SqliteQueueOps(this.db, this.queues, this.subscriptions, this.topicLog),
      topics: new SqliteTopicOps(this.db, this.topicLog, this.queues, this.subscriptions),
      maintenance: this.maintenanceOps,
      records: this.records,
      workers: new SqliteWorkerOps(this.db),
      locks: this.locks,
      flows: new SqliteFlowOps(this.db),
      dependencies: new SqliteDependencyOps(this.db),
    };
    this.writer = new Writer(
      this.db,
      () => {
        this.ids.began();
        this.topicIds.began();
        this.checkExternalChange();
      },
      () => this.dropCaches(),
      () => {
        this.ids.flush();
        this.topicIds.flush();
      },
      () => this.checkpoints?.nudge(),
      () => this.checkpoints !== undefined,
      WAL_AUTOCHECKPOINT_FRAMES,
    );
    this.waiters = new Waiters<Message>(() => this.checkExternalChange());
    this.settledWaiters = new Waiters(() => this.checkExternalChange());
    // Crash recovery: only leases that have lapsed (another live process may hold the rest).
    this.writer.runNow(() => runSync(recoverLeases(this.clock.now()), this.ops));
    // Last: nothing below can fail and leave the thread a connection to a file no broker holds.
    if (options.checkpointThread !== false && !isMemoryPath(path) && !options.exclusive) {
      this.checkpoints = this.startCheckpoints(options.synchronous ?? "normal");
    }
    // Steps only between the writer's transactions, not while a long write holds one open.
    this.reclaimer = isMemoryPath(path)
      ? undefined
      : new FreePageReclaimer(
          this.db,
          () => !this.writer.busy,
          () => this.checkpoints?.nudge(),
        );
    this.loops = this.maintenanceLoops({
      clock: this.clock,
      reclaim: this.reclaimer ? () => void this.reclaimer?.reclaim() : undefined,
      logger: this.logger,
    });
    this.effectTargets = {
      waiters: this.waiters,
      settledWaiters: this.settledWaiters,
      loops: this.loops,
      logger: this.logger,
      sentCounts: this.sentCounts,
      completedCounts: this.completedCounts,
      settleAfterCommit: (ctx, seqs) => this.settleAfterCommit(ctx, seqs),
    };
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

  /** Queues a long write (see `WriteOptions.long`): run alone, in slices, other work served between. */
  private writeLong<T>(
    steps: (ctx: WriteContext, now: number) => Iterator<void, T, undefined>,
    signal?: AbortSignal,
  ): Promise<T> {
    if (this.closing) return Promise.reject(new ClosedError());
    return this.writer.runSliced((ctx) => steps(ctx, this.clock.now()), signal);
  }

  /** Runs a read now; while a long write holds the transaction open, after its commit (it would see its rows). */
  private read<T>(fn: () => T): Promise<T> {
    if (this.closing) return Promise.reject(new ClosedError());
    if (this.writer.busy) return this.writer.settled().then(() => this.read(fn));
    try {
      this.checkExternalChange();
      return Promise.resolve(fn());
    } catch (err) {
      // A read meets a corrupt page or a lock like a write does: the caller gets the named error.
      return Promise.reject(mapSqliteError(err));
    }
  }

  /** Runs a sliced read (`ReadOptions.sliced`): its statements spread over turns, writes between. */
  private readSliced<T>(steps: () => Iterator<void, T, undefined>): Promise<T> {
    if (this.closing) return Promise.reject(new ClosedError());
    return this.writer.readSliced(steps(), () => this.checkExternalChange());
  }

  /** What a write's verb announces, for after its commit (see `WriteEffects`). */
  private effectsOf(ctx: WriteContext, now: number): Effects {
    return new WriteEffects(this.effectTargets, ctx, now);
  }

  /** A parked receiver claims in the sender's transaction (run from `WriteEffects.activated`'s before-commit hook). */
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

  // --- sending ----------------------------------------------------------------------------------

  protected cachedQueue(queue: string): QueueRow | undefined {
    return this.queues.cached(queue);
  }

  protected forgetQueue(queue: string): void {
    this.queues.forget(queue);
  }

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
    return this.queueOwnWrite(() =>
      this.write(
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
      ),
    );
  }

  // --- the broker -------------------------------------------------------------------------------

  protected storageReadiness(): Promise<Readiness> {
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
    await this.writer.settled();
    await this.reclaimer?.reclaim();
    return out;
  }

  protected async closeStorage(): Promise<void> {
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
  }
}
