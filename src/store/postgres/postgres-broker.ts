import type { Broker } from "../../contract/broker.js";
import { type ConsumeHandler, type ConsumeOptions, type Consumer, consume } from "../../contract/consume.js";
import {
  ClosedError,
  InternalError,
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
  OutgoingMessage,
  PeekOptions,
  PurgeOptions,
  QueueConfig,
  QueueInfo,
  QueueStats,
  Readiness,
  ReceiveMode,
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
  prepareFlow,
  waitingNodes,
} from "../../core/flow-input.js";
import { validateGates } from "../../core/gates.js";
import { leaseCap } from "../../core/lease.js";
import { DEFAULT_WORKER_STALE_MS, RECEIVE_BODY_BUDGET } from "../../core/limits.js";
import { Loops, type MaintenanceStep } from "../../core/loops.js";
import { emptyResult, type MaintenanceResult } from "../../core/maintenance-result.js";
import { type MessageRow, peekedMessage } from "../../core/message-row.js";
import { checkIncrements, metricKind, metricsRange } from "../../core/metrics-input.js";
import { type PreparedMessage, prepareMessages } from "../../core/outgoing.js";
import { pingMsSince } from "../../core/ping.js";
import { type Dialect, type Effects, runAsync, type Verb, type WriteScope } from "../../core/port.js";
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
import { type SendAt, type Sent, sendAt, sendFresh, send as sendVerb } from "../../core/verbs/send.js";
import { plainSend } from "../../core/verbs/send-rows.js";
import { waitAny } from "../../core/wait-any.js";
import { Waiters } from "../../core/waiters.js";
import { VERSION } from "../../version.js";
import { PgClaimer } from "./claim.js";
import { PEEK_COLUMNS } from "./columns.js";
import { type Conn, Db } from "./db.js";
import { PgDependencies } from "./dependencies.js";
import { PgEventLog } from "./event-log.js";
import { PgGates } from "./gates.js";
import { PgJobMetrics } from "./job-metrics.js";
import { lockAll, xactLockKey } from "./locks.js";
import { PgMaintenance } from "./maintenance.js";
import { PgMessageLogs } from "./message-logs.js";
import { migrate } from "./migrate.js";
import { PG_SCHEMA_VERSION } from "./migrations/index.js";
import { pgName } from "./names.js";
import { channelOf, NOTIFY, PgNode } from "./node.js";
import { type PgOpsContext, pgOps } from "./ops.js";
import {
  DEFAULT_SCHEMA,
  type PostgresBrokerOptions,
  redactDsn,
  requireSchemaName,
  requireSynchronousCommit,
  splitSchemaParam,
} from "./options.js";
import { PgQueueRegistry, type PgQueueRow } from "./queue-registry.js";
import { pgReadiness } from "./readiness.js";
import { PgNamedLocks, PgRecords, PgWorkers } from "./records.js";
import { PgSubscriptions } from "./subscriptions.js";
import { PgTopicLog } from "./topic-log.js";

const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;
const MAX_RECEIVE = 256;
const MAX_WAIT_MS = 20_000;
const MAX_PEEK = 1000;
const DEFAULT_PEEK = 32;
/**
 * `awaitSettled` re-checks at least this often: settlements on this node wake it at once, those of
 * other nodes (and the leader's reaper and TTL sweep) are seen at the next re-check.
 */
const SETTLED_RECHECK_MS = 250;

/** NOTIFY from a pool connection (while the listening one reconnects), not waiting for the WAL flush. */
const NOTIFY_RELAXED = `SELECT set_config('synchronous_commit', 'off', true), n.* FROM (${NOTIFY}) AS n`;

/** The application's own SQL and sends in one PostgreSQL transaction (`broker.tx`). */
export interface PgTransaction {
  /** Runs one parameterised statement of the application inside the transaction. */
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
  /** Sends (or publishes) within the transaction; returns the sequence numbers. */
  send(
    queue: string,
    messages: OutgoingMessage | OutgoingMessage[],
    options?: SendOptions,
  ): Promise<number[]>;
}

/** One claim per state, merged: each an index range whatever the queue holds. */
const PEEK_ALL = `
  SELECT * FROM (
    ${MESSAGE_STATES.map(
      (s) =>
        `(SELECT ${PEEK_COLUMNS} FROM messages WHERE queue = $1 AND state = '${s}' AND id >= $2 ORDER BY id LIMIT $3)`,
    ).join(" UNION ALL ")}
  ) t ORDER BY id LIMIT $3`;
const PEEK_STATE = `SELECT ${PEEK_COLUMNS} FROM messages WHERE queue = $1 AND state = $4 AND id >= $2 ORDER BY id LIMIT $3`;

/** A queue's kept counts (migration 4): the folded ones plus the deltas not folded yet, in one snapshot. */
const STATS = `
  SELECT state, sum(n)::bigint AS n FROM (
    SELECT state, n FROM queue_counts WHERE queue = $1
    UNION ALL
    SELECT state, n FROM queue_count_deltas WHERE queue = $1
  ) c GROUP BY state`;

/** The oldest active or locked message: the first by sequence in each state, two index seeks. */
const OLDEST = `
  SELECT least(
    (SELECT enqueued_at FROM messages WHERE queue = $1 AND state = 'active' ORDER BY id LIMIT 1),
    (SELECT enqueued_at FROM messages WHERE queue = $1 AND state = 'locked' ORDER BY id LIMIT 1)
  ) AS oldest`;

const DB_SIZE = `
  SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS size
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = $1 AND c.relkind = 'r'`;

/**
 * The `Broker` contract on PostgreSQL: many broker and worker nodes share one database. Each node
 * has a connection pool and one listening connection (NOTIFY wakes long-polls on every node; the
 * same connection holds the leader lock of the background loops when this node is elected).
 */
export class PostgresBroker extends CoreBroker implements Broker {
  readonly clock: Clock;
  readonly schema: string;
  private readonly db: Db;
  private readonly dsn: string;
  private readonly channel: string;
  private readonly logger: Logger;
  protected readonly maxMessageBytes: number;
  private readonly dlqBounds: DlqBounds;
  private readonly queues = new PgQueueRegistry();
  private readonly subscriptions: PgSubscriptions;
  private readonly opsContext: PgOpsContext;
  private readonly claimer: PgClaimer;
  protected readonly dialect: Dialect = {
    write: (verb, options) => {
      const run = (c: Conn, now: number) =>
        runAsync(verb({ now, effects: this.effectsOf(c) }), pgOps(c, this.opsContext));
      return options?.oneStatement ? this.one(run, options.signal) : this.write(run, options?.signal);
    },
    read: (verb) => this.read((c) => runAsync(verb(this.clock.now()), pgOps(c, this.opsContext))),
  };
  private readonly maintenance: PgMaintenance;
  private readonly waiters: Waiters;
  /** Wake-ups of `awaitSettled`, keyed by sequence number. */
  private readonly settledWaiters: Waiters;
  private readonly records = new PgRecords();
  private readonly topicLog = new PgTopicLog();
  private readonly gates = new PgGates();
  private readonly workers = new PgWorkers();
  private readonly namedLocks = new PgNamedLocks();
  private readonly loops: Loops;
  private readonly node: PgNode;
  private readonly completedCounts = new Map<string, number>();
  private openedAt = 0;
  private nextDue: number | undefined;
  /** The earliest lease end the last reap saw (the leader's reaper arms for it). */
  private nextLease: number | undefined;
  private missedNotifications = false;
  private readonly pending = new Set<string>();
  private flushing: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  /** Use `PostgresBroker.open` (or `openBroker("postgres://…")`). */
  private constructor(location: string, options: PostgresBrokerOptions) {
    super();
    const { dsn, schema } = splitSchemaParam(location);
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? stderrLogger;
    this.schema = requireSchemaName(options.schema ?? schema ?? DEFAULT_SCHEMA);
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.dlqBounds = { ...NO_DLQ_BOUNDS, ...options.dlqRetention };
    this.dsn = dsn;
    this.channel = channelOf(this.schema);
    this.db = new Db({
      connectionString: dsn,
      schema: this.schema,
      poolSize: options.poolSize ?? 10,
      maxRetries: options.maxRetries ?? 5,
      applicationName: "mqlite",
      synchronousCommit: requireSynchronousCommit(options.synchronousCommit),
    });
    this.subscriptions = new PgSubscriptions(this.queues, (source) => compileFilter(source, this.logger));
    this.opsContext = { schema: this.schema, queues: this.queues, subscriptions: this.subscriptions };
    this.claimer = new PgClaimer(this.schema);
    this.maintenance = new PgMaintenance(this.schema);
    this.waiters = new Waiters(() => {
      const missed = this.missedNotifications;
      this.missedNotifications = false;
      return missed;
    });
    this.settledWaiters = new Waiters(() => false);
    this.loops = new Loops({
      clock: this.clock,
      run: (step) => this.runMaintenanceStep(step),
      nextScheduled: () => this.nextDue,
      nextLeaseEnd: () => this.nextLease,
      logger: this.logger,
    });
    this.node = new PgNode(
      this.db,
      this.channel,
      this.schema,
      options.background !== false,
      options.leaderPollMs ?? 1000,
      {
        notification: (payload) => this.onNotification(payload),
        reconnected: () => {
          this.missedNotifications = true;
        },
        leadership: (leader) => {
          if (leader) this.loops.start();
          else this.loops.stop();
        },
      },
      this.logger,
    );
  }

  /** Connects, creates or migrates the schema, recovers lapsed leases, and joins the election. */
  static async open(dsn: string, options: PostgresBrokerOptions = {}): Promise<PostgresBroker> {
    const broker = new PostgresBroker(dsn, options);
    try {
      await broker.start();
    } catch (err) {
      await broker.abort();
      throw err instanceof Error && "code" in err && typeof (err as { status?: unknown }).status === "number"
        ? err
        : new InternalError(`mqlite: cannot open PostgreSQL at ${redactDsn(dsn)}: ${messageOf(err)}`, {
            cause: err,
          });
    }
    return broker;
  }

  private async start(): Promise<void> {
    const client = await this.db.pool.connect();
    try {
      await migrate(client, this.schema, this.clock.now());
    } finally {
      client.release();
    }
    this.openedAt = this.clock.now();
    // Crash recovery: only leases that have lapsed (other live nodes may hold the rest).
    await this.db.tx(async (c) => this.maintenance.reap(c, this.clock.now(), emptyResult()));
    await this.node.start();
  }

  private async abort(): Promise<void> {
    this.loops.stop();
    await this.node.close().catch(() => {});
    await this.db.close().catch(() => {});
  }

  /** True while this node runs the background loops. */
  get isLeader(): boolean {
    return this.node.isLeader;
  }

  private onNotification(payload: string): void {
    if (payload.startsWith("q:")) this.waiters.notify(payload.slice(2));
    else if (payload.startsWith("s:")) {
      const at = Number(payload.slice(2));
      if (Number.isFinite(at)) this.loops.armScheduler(at);
    }
  }

  /**
   * Once the transaction commits: wakes this node's waiters at once, and tells every node (the
   * leader's scheduler included) through NOTIFY.
   */
  private wakeLocal(c: Conn, what: { activated: Iterable<string>; scheduledFor: number[] }): void {
    c.afterCommit(() => {
      for (const q of what.activated) this.waiters.notify(q);
      for (const at of what.scheduledFor) this.loops.armScheduler(at);
      this.notifyNodes(payloadsOf(what));
    });
  }

  /**
   * Sends notifications after the commits they announce, coalesced: while one NOTIFY transaction
   * is in flight, the payloads of later commits gather for the next. NOTIFY inside the data
   * transactions would serialise every committing transaction of the database on the notification
   * queue's lock (through its WAL flush); this way data commits never wait for each other. A
   * notification lost with a crashed node costs other nodes' long-polls their wake-up, not data.
   */
  private notifyNodes(payloads: string[]): void {
    if (payloads.length === 0) return;
    for (const p of payloads) this.pending.add(p);
    if (!this.flushing) this.flushing = this.flush();
  }

  /** What a write's verb announces: this node's waiters and the other nodes, after the commit. */
  private effectsOf(c: Conn): Effects {
    return {
      activated: (queue) => this.wakeLocal(c, { activated: [queue], scheduledFor: [] }),
      scheduled: (at) => this.wakeLocal(c, { activated: [], scheduledFor: [at] }),
      settled: (seqs) => this.notifySettled(c, [...seqs]),
      completed: (queue, n) => this.countCompleted(c, queue, n),
      sent: () => {},
      filterFailed: (f) =>
        c.afterCommit(() =>
          this.logger.warn(f, "filter failed at run time; message not routed to this subscription"),
        ),
    };
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.size > 0) {
        const batch = [...this.pending];
        this.pending.clear();
        try {
          if (!(await this.node.notify(batch))) {
            await this.db.pool.query(NOTIFY_RELAXED, [this.channel, batch]);
          }
        } catch (err) {
          this.logger.warn({ err: messageOf(err) }, "could not notify other nodes");
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }

  private write<T>(fn: (c: Conn, now: number) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.closing) return Promise.reject(new ClosedError());
    return this.db.tx((c) => fn(c, this.clock.now()), signal);
  }

  private one<T>(fn: (c: Conn, now: number) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.closing) return Promise.reject(new ClosedError());
    return this.db.one((c) => fn(c, this.clock.now()), signal);
  }

  private read<T>(fn: (c: Conn) => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(new ClosedError());
    return this.db.read(fn);
  }

  private lockNamespace(c: Conn): Promise<void> {
    return lockAll(c, [xactLockKey(this.schema, "namespace")]);
  }

  // --- queues -----------------------------------------------------------------------------------

  async createQueue(name: string, config?: QueueConfig): Promise<void> {
    requireName(name, "queue");
    await this.write(async (c, now) => {
      await this.lockNamespace(c);
      if (
        config?.kind === "subscription" &&
        !(await this.queues.get(c, name)) &&
        !(await this.queues.isLiveTopic(c, name))
      ) {
        // A backing queue without its subscription could never be deleted or unsubscribed.
        throw new InvalidArgumentError("mqlite: a subscription's backing queue is created by subscribe");
      }
      await this.queues.upsert(c, name, config, now);
    });
  }

  async deleteQueue(name: string): Promise<void> {
    name = pgName(name);
    await this.write(async (c) => {
      await this.lockNamespace(c);
      const q = await this.queues.require(c, name);
      if (q.kind === "subscription") {
        throw new NameConflictError(
          `mqlite: "${name}" is a subscription's backing queue; unsubscribe instead`,
        );
      }
      await this.dropQueue(c, name);
    });
  }

  private async dropQueue(c: Conn, name: string): Promise<void> {
    await this.queues.delete(c, name);
    await c.q("DELETE FROM dedup WHERE queue = $1", [name]);
    await c.q("DELETE FROM settlement_receipts WHERE queue = $1", [name]);
    await c.q("DELETE FROM receive_attempts WHERE queue = $1", [name]);
  }

  listQueues(): Promise<QueueInfo[]> {
    return this.read((c) => this.queues.list(c));
  }

  stats(queue: string): Promise<QueueStats> {
    queue = pgName(queue);
    return this.read(async (c) => {
      await this.queues.require(c, queue);
      const rows = await c.q<CountRow>(STATS, [queue]);
      const [row] = await c.q<{ oldest: number | null }>(OLDEST, [queue]);
      return statsFromCounts(queue, rows, row?.oldest ?? null, this.clock.now());
    });
  }

  /** Rows completed through this node since it opened, per queue (for metrics). */
  completedCount(queue: string): number {
    queue = pgName(queue);
    return this.completedCounts.get(queue) ?? 0;
  }

  private countCompleted(c: Conn, queue: string, n: number): void {
    if (n > 0)
      c.afterCommit(() => this.completedCounts.set(queue, (this.completedCounts.get(queue) ?? 0) + n));
  }

  // --- sending ----------------------------------------------------------------------------------

  /**
   * A send to a cached standard queue that needs no lock goes as one guarded statement without
   * BEGIN/COMMIT; a stale row (the queue changed) sends again the long way.
   */
  protected override async sendPrepared(
    queue: string,
    prepared: PreparedMessage[],
    at: SendAt,
  ): Promise<number[]> {
    const name = pgName(queue);
    const cached = this.queues.cached(name);
    if (cached && plainSend(cached, prepared)) {
      const seqs = await this.dialect.write((w) => sendFresh(w, cached, prepared, at), {
        oneStatement: true,
      });
      if (seqs) return seqs;
      this.queues.forget(name);
    }
    return super.sendPrepared(queue, prepared, at);
  }

  /**
   * A send that met a queue deleted under it (its subscriptions changed meanwhile) is rolled back
   * whole; it is retried once with a fresh view before `not_found` is reported.
   */
  protected override async sendWrite<T>(verb: (w: WriteScope) => Verb<T>): Promise<T> {
    try {
      return await this.dialect.write(verb);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      return this.dialect.write(verb);
    }
  }

  /**
   * Runs the application's SQL and sends in one transaction (the transactional outbox). A transient
   * failure before COMMIT re-runs `fn`, so it must do nothing but database work through `t`.
   */
  tx<T>(fn: (t: PgTransaction) => Promise<T>): Promise<T> {
    return this.write(async (c, now) => {
      const t: PgTransaction = {
        query: (text, values) => c.q(text, values),
        send: async (queue, messages, options = {}) => {
          const at = sendAt(options);
          const prepared = prepareMessages(messages, this.maxMessageBytes);
          return (await this.sendIn(c, now, queue, prepared, at)).seqs;
        },
      };
      return fn(t);
    });
  }

  /** Runs the send verb inside a transaction (`tx` and the flow and debounce verbs). */
  private sendIn(
    c: Conn,
    now: number,
    queue: string,
    messages: PreparedMessage[],
    at: SendAt,
  ): Promise<Sent> {
    return runAsync(
      sendVerb({ now, effects: this.effectsOf(c) }, queue, messages, at),
      pgOps(c, this.opsContext),
    );
  }

  // --- receiving and settling -------------------------------------------------------------------

  async receive(queue: string, options: ReceiveOptions = {}): Promise<Message[]> {
    queue = pgName(queue);
    const max = clampCount(options.maxMessages, 1, MAX_RECEIVE);
    const wait = Math.min(Math.max(0, Math.trunc(options.waitMs ?? 0) || 0), MAX_WAIT_MS);
    const mode = options.mode ?? "peek-lock";
    if (mode !== "peek-lock" && mode !== "receive-and-delete") {
      throw new InvalidArgumentError(`mqlite: unknown receive mode "${mode}"`);
    }
    const attemptId = options.attemptId || undefined;
    const signal = options.signal;
    const claim = () => this.claim(queue, max, mode, attemptId, signal);
    const deadline = this.clock.now() + wait;
    for (;;) {
      const got = await claim();
      if (got.length > 0 || wait === 0) return got;
      const now = this.clock.now();
      if (now >= deadline || signal?.aborted) return [];
      const waiter = this.waiters.wait(queue, deadline, now, signal);
      // A close while the second claim runs rejects the waiter before anyone awaits it.
      waiter.woken.catch(() => {});
      const again = await claim().catch((err) => {
        waiter.cancel();
        throw err;
      });
      if (again.length > 0) {
        waiter.cancel();
        return again;
      }
      if (!(await waiter.woken)) return [];
    }
  }

  /**
   * A plain peek-lock receive on a standard or group_fifo queue is one statement, guarded by the
   * cached queue row's version (re-read when stale); everything else is a transaction.
   */
  private async claim(
    queue: string,
    max: number,
    mode: ReceiveMode,
    attemptId: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Message[]> {
    if (mode === "peek-lock" && !attemptId) {
      let q: PgQueueRow | undefined = this.queues.cached(queue);
      for (let i = 0; i < 3; i++) {
        if (!q) q = await this.read((c) => this.queues.require(c, queue));
        if (q.ordering_mode === "strict_fifo") break;
        const row = q;
        const r = await this.one((c, now) => this.claimer.claimBatch(c, row, max, now, 0, true), signal);
        if (r.fresh) return r.messages;
        this.queues.forget(queue);
        q = undefined;
      }
    }
    return this.write(
      async (c, now) =>
        this.claimer.claimTx(c, await this.queues.require(c, queue), max, mode, now, attemptId),
      signal,
    );
  }

  async receiveDeferred(queue: string, seqNumbers: number[]): Promise<Message[]> {
    queue = pgName(queue);
    const seqs = seqNumbers.map(seqNumber);
    return this.write(async (c, now) =>
      this.claimer.claimDeferred(c, await this.queues.require(c, queue), seqs, now),
    );
  }

  /** Wakes this node's `awaitSettled` for these messages once the transaction commits. */
  private notifySettled(c: Conn, seqs: number[]): void {
    if (seqs.length === 0) return;
    c.afterCommit(() => {
      for (const s of seqs) this.settledWaiters.notify(String(s));
    });
  }

  /** The consumer loop (one implementation for every broker: contract/consume.ts). */
  consume(queue: string, handler: ConsumeHandler, options?: ConsumeOptions): Consumer {
    return consume(this, queue, handler, options);
  }

  // --- inspecting and the dead-letter queue -----------------------------------------------------

  async peek(queue: string, options: PeekOptions = {}): Promise<Message[]> {
    queue = pgName(queue);
    const max = clampCount(options.max, DEFAULT_PEEK, MAX_PEEK);
    const from = integer(options.fromSeq, "from_seq");
    if (options.state && !MESSAGE_STATES.includes(options.state)) return [];
    const rows = await this.read((c) =>
      options.state
        ? c.q<MessageRow>(PEEK_STATE, [queue, from, max, options.state])
        : c.q<MessageRow>(PEEK_ALL, [queue, from, max]),
    );
    const out: Message[] = [];
    let bytes = 0;
    for (const row of rows) {
      out.push(peekedMessage(row));
      bytes += row.body.length;
      if (bytes >= RECEIVE_BODY_BUDGET) break;
    }
    return out;
  }

  async redrive(queue: string, options: RedriveOptions = {}): Promise<number> {
    queue = pgName(queue);
    const max = nonNegative(options.max, "max");
    const olderThan = nonNegativeDuration(options.olderThanMs, "older_than_ms");
    const rate = nonNegative(options.ratePerSec, "rate_per_sec");
    const target = options.target && options.target !== queue ? options.target : undefined;
    const moveChunk = (limit: number) =>
      this.write(async (c, now) => {
        await this.queues.require(c, queue);
        const t = target !== undefined ? await this.queues.require(c, target) : undefined;
        const dl = this.maintenance.deadLetters;
        const rows = await dl.select(
          c,
          queue,
          limit,
          olderThan > 0 ? now - olderThan : 0,
          options.seqNumbers,
        );
        const moved = await dl.redrive(c, rows, t, now);
        if (moved > 0) this.wakeLocal(c, { activated: [target ?? queue], scheduledFor: [] });
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

  async purge(queue: string, options: PurgeOptions = {}): Promise<number> {
    queue = pgName(queue);
    const max = nonNegative(options.max, "max");
    const olderThan = nonNegativeDuration(options.olderThanMs, "older_than_ms");
    return this.write(async (c, now) => {
      await this.queues.require(c, queue);
      return this.maintenance.deadLetters.purge(c, queue, max, olderThan > 0 ? now - olderThan : 0);
    });
  }

  // --- topics -----------------------------------------------------------------------------------

  async subscribe(topic: string, name: string, options: SubscribeOptions = {}): Promise<void> {
    const filter = (options.filter ?? "").trim() === "" ? "" : (options.filter as string);
    requireName(topic, "topic");
    requireName(name, "subscription");
    if (topic === name) throw new NameConflictError("mqlite: a subscription cannot be named after its topic");
    if (filter) compileFilter(filter, this.logger, true);
    let config = options.config;
    if (config) {
      const { kind: _ignored, ...rest } = config as QueueConfig;
      config = rest;
    }
    await this.write(async (c, now) => {
      await this.lockNamespace(c);
      await this.subscriptions.subscribeQueue(c, topic, name, filter, config, now);
    });
  }

  async unsubscribe(topic: string, name: string): Promise<void> {
    topic = pgName(topic);
    name = pgName(name);
    await this.write(async (c) => {
      await this.lockNamespace(c);
      const row = await this.subscriptions.unsubscribe(c, topic, name);
      if (row.kind === "queue") await this.dropQueue(c, name);
      if (row.kind === "log") {
        await this.topicLog.dropSubscription(c, topic, name);
        if (
          (await this.subscriptions.logSubscriptionCount(c, topic)) === 0 &&
          !(await this.topicLog.isDeclared(c, topic))
        ) {
          await this.topicLog.dropTopic(c, topic);
        }
      }
    });
  }

  async pauseSubscription(topic: string, name: string): Promise<void> {
    topic = pgName(topic);
    name = pgName(name);
    await this.write((c, now) => this.subscriptions.pause(c, topic, name, true, now));
  }

  async resumeSubscription(topic: string, name: string): Promise<void> {
    topic = pgName(topic);
    name = pgName(name);
    await this.write((c, now) => this.subscriptions.pause(c, topic, name, false, now));
  }

  listSubscriptions(): Promise<SubscriptionInfo[]> {
    return this.read((c) => this.subscriptions.list(c));
  }

  async testFilter(filter: string, sample?: FilterSample): Promise<TestFilterResult> {
    if (this.closing) throw new ClosedError();
    return testFilter(filter, sample, this.clock.now(), this.maxMessageBytes);
  }

  // --- job topics (TopicService) -----------------------------------------------------------------

  async subscribeTask(topic: string, name: string, options: TaskSubscribeOptions): Promise<void> {
    requireName(topic, "topic");
    requireName(name, "subscription");
    const spec = taskSpec(options, requireName, integer);
    if (spec.filter) compileFilter(spec.filter, this.logger, true);
    if (spec.queue === topic)
      throw new NameConflictError("mqlite: a topic cannot deliver to a queue of its own name");
    await this.write(async (c, now) => {
      await this.lockNamespace(c);
      await this.subscriptions.subscribeTask(c, pgName(topic), pgName(name), spec, now);
    });
  }

  async subscribeLog(topic: string, name: string, options: LogSubscribeOptions = {}): Promise<void> {
    const filter = (options.filter ?? "").trim() === "" ? "" : (options.filter as string);
    requireName(topic, "topic");
    requireName(name, "subscription");
    if (filter) compileFilter(filter, this.logger, true);
    await this.write(async (c, now) => {
      await this.lockNamespace(c);
      await this.subscriptions.subscribeLog(c, topic, name, filter, now);
    });
  }

  async declareTopic(name: string, options: DeclareTopicOptions = {}): Promise<void> {
    requireName(name, "topic");
    const retention =
      options.retentionMs === undefined || options.retentionMs === null
        ? null
        : nonNegativeDuration(options.retentionMs, "retention_ms");
    await this.write(async (c, now) => {
      await this.lockNamespace(c);
      if (await this.queues.get(c, name))
        throw new NameConflictError(`mqlite: "${name}" is the name of a queue`);
      await this.topicLog.declare(c, name, retention, now);
    });
  }

  listDeclaredTopics(): Promise<EngineDeclaredTopic[]> {
    return this.read((c) => this.topicLog.listDeclared(c));
  }

  async readTopic(topic: string, name: string, options: ReadTopicOptions = {}): Promise<TopicLogMessage[]> {
    const limit = topicLimit(options.limit);
    if (limit === 0) return [];
    topic = pgName(topic);
    name = pgName(name);
    return this.read(async (c) => {
      const sub = await this.subscriptions.row(c, topic, name);
      if (sub?.kind !== "log") return [];
      return this.topicLog.read(
        c,
        topic,
        sub.cursor === null ? null : Number(sub.cursor),
        limit,
        this.clock.now(),
        this.subscriptions.filterFor(sub),
      );
    });
  }

  async ackTopic(topic: string, name: string, id: number): Promise<boolean> {
    const n = integer(id, "id");
    return this.one((c) => this.subscriptions.ack(c, pgName(topic), pgName(name), n));
  }

  async leaseTopic(topic: string, name: string, options: LeaseTopicOptions = {}): Promise<TopicLogMessage[]> {
    const visibility =
      options.visibilityMs === undefined
        ? DEFAULT_VISIBILITY_MS
        : nonNegativeDuration(options.visibilityMs, "visibility_ms");
    const limit = topicLimit(options.limit);
    if (limit === 0) return [];
    topic = pgName(topic);
    name = pgName(name);
    return this.write(async (c, now) => {
      const sub = await this.subscriptions.row(c, topic, name);
      if (sub?.kind !== "log") return [];
      return this.topicLog.lease(c, topic, name, limit, visibility, now, this.subscriptions.filterFor(sub));
    });
  }

  async ackMessage(topic: string, name: string, id: number): Promise<boolean> {
    const n = integer(id, "id");
    return this.one((c) => this.topicLog.ackMessage(c, pgName(topic), pgName(name), n));
  }

  async nackMessage(topic: string, name: string, id: number): Promise<boolean> {
    const n = integer(id, "id");
    return this.one((c) => this.topicLog.nackMessage(c, pgName(topic), pgName(name), n));
  }

  topicStats(topic?: string): Promise<TopicBacklog[]> {
    return this.read(async (c) => {
      const subs = (await this.subscriptions.rows(c)).filter(
        (r) => r.kind === "task" && (topic === undefined || r.topic === topic),
      );
      const counts = await c.q<DeliveryCount>(
        `SELECT topic, subscription, state, count(*)::int AS n, min(enqueued_at) AS oldest FROM messages
         WHERE topic IS NOT NULL AND ($1::text IS NULL OR topic = $1) GROUP BY topic, subscription, state`,
        [topic ?? null],
      );
      return topicBacklog(subs, counts);
    });
  }

  topicLogStats(topic?: string): Promise<EngineTopicLogStat[]> {
    return this.read(async (c) => {
      const subs = (await this.subscriptions.rows(c)).filter(
        (r) => r.kind === "log" && (topic === undefined || r.topic === topic),
      );
      return this.topicLog.logStats(c, subs, this.clock.now());
    });
  }

  async reapSubscriptions(options: ReapOptions = {}): Promise<number> {
    const liveness = options.livenessMs ?? EPHEMERAL_LIVENESS_MS;
    const grace = options.graceMs ?? EPHEMERAL_GRACE_MS;
    return this.write((c, now) => this.subscriptions.reap(c, now - liveness, now - grace));
  }

  // --- the job face's capabilities (JobService) ------------------------------------------------

  async pauseQueue(name: string): Promise<void> {
    name = pgName(name);
    await this.write((c, now) => this.queues.setPaused(c, name, true, now));
  }

  async resumeQueue(name: string): Promise<void> {
    name = pgName(name);
    await this.write(async (c, now) => {
      await this.queues.setPaused(c, name, false, now);
      this.wakeLocal(c, { activated: [name], scheduledFor: [] });
    });
  }

  async receiveAny(queues: string[], options: ReceiveAnyOptions = {}): Promise<Message[]> {
    if (!Array.isArray(queues)) throw new InvalidArgumentError("mqlite: queues must be a list");
    for (const q of queues) requireName(q, "queue");
    validateGates(options.gates);
    const leaseCapMs = leaseCap(options.lockDurationMs);
    const names = [...new Set(queues)];
    const max = clampCount(options.maxMessages, 1, MAX_RECEIVE);
    const wait = Math.min(Math.max(0, Math.trunc(options.waitMs ?? 0) || 0), MAX_WAIT_MS);
    const gates = options.gates ?? [];
    const signal = options.signal;
    const deadline = this.clock.now() + wait;
    for (;;) {
      const first = await this.claimAny(names, max, gates, leaseCapMs, signal);
      if (first.messages.length > 0 || wait === 0) return first.messages;
      const now = this.clock.now();
      if (now >= deadline || signal?.aborted) return [];
      const until = Math.min(deadline, first.retryAt ?? deadline);
      const waiter = waitAny(this.waiters, names, until, now, signal);
      waiter.woken.catch(() => {});
      let again: { messages: Message[]; retryAt: number | undefined };
      try {
        again = await this.claimAny(names, max, gates, leaseCapMs, signal);
      } catch (err) {
        waiter.cancel();
        throw err;
      }
      if (again.messages.length > 0) {
        waiter.cancel();
        return again.messages;
      }
      await waiter.woken;
      if (signal?.aborted) return [];
    }
  }

  /**
   * One queue without gates, whose row is cached and not strict: one statement guarded by the cached
   * row's version (as a plain receive). Otherwise one claim transaction across the queues (in the
   * order given), under the gates' locks.
   */
  private async claimAny(
    names: string[],
    max: number,
    gates: NonNullable<ReceiveAnyOptions["gates"]>,
    leaseCapMs: number,
    signal: AbortSignal | undefined,
  ): Promise<{ messages: Message[]; retryAt: number | undefined }> {
    const only = names.length === 1 && gates.length === 0 ? this.queues.cached(names[0]!) : undefined;
    if (only && only.ordering_mode !== "strict_fifo") {
      const r = await this.one(
        (c, now) => this.claimer.claimBatch(c, only, max, now, leaseCapMs, true),
        signal,
      );
      if (r.fresh) {
        for (const m of r.messages) m.queue = only.name;
        return { messages: r.messages, retryAt: undefined };
      }
      this.queues.forget(only.name);
    }
    return this.write(async (c, now) => {
      const rows = await this.queues.getMany(c, names);
      const keys = gates.map((g) => xactLockKey(this.schema, "gate", g.subject));
      for (const q of rows.values()) {
        if (q.ordering_mode === "strict_fifo") keys.push(xactLockKey(this.schema, "queue", q.name));
      }
      await lockAll(c, keys);
      const session = gates.length > 0 ? await this.gates.open(c, gates, now) : undefined;
      const messages: Message[] = [];
      for (const name of names) {
        const q = rows.get(name);
        if (!q) continue;
        const got = await this.claimer.claimTx(
          c,
          q,
          max - messages.length,
          "peek-lock",
          now,
          undefined,
          session,
          leaseCapMs,
        );
        for (const m of got) m.queue = name;
        messages.push(...got);
        if (messages.length >= max) break;
      }
      await session?.finish();
      return { messages, retryAt: session?.retryAt() };
    }, signal);
  }

  async cancelMessage(
    queue: string,
    seq: number,
    options: CancelMessageOptions = {},
  ): Promise<CancelOutcome> {
    queue = pgName(queue);
    const retain = nonNegativeDuration(options.retainMs, "retain_ms");
    const s = seqNumber(seq);
    return this.write(async (c, now) => {
      const outcome = await this.records.cancel(c, queue, s, options.lockToken, retain, now);
      if (outcome === "cancelled") this.notifySettled(c, [s]);
      return outcome;
    });
  }

  async setProgress(queue: string, seq: number, lockToken: string, progress: number): Promise<void> {
    queue = pgName(queue);
    const p = integer(progress, "progress");
    if (p < 0 || p > 100) throw new InvalidArgumentError("mqlite: progress must be within 0..100");
    const s = seqNumber(seq);
    await this.one((c) => this.records.setProgress(c, queue, s, lockToken, p));
  }

  async getMessages(seqNumbers: number[]): Promise<MessageRecord[]> {
    const seqs = seqNumbers.map(seqNumber);
    return this.read((c) => this.records.get(c, seqs));
  }

  async browse(options: BrowseOptions = {}): Promise<MessageRecord[]> {
    return this.read((c) => this.records.browse(c, options));
  }

  async messageErrors(seq: number): Promise<AttemptError[]> {
    const s = seqNumber(seq);
    return this.read((c) => this.records.errors(c, s));
  }

  async awaitSettled(
    seqNumbers: number[],
    options: { waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<number[]> {
    const seqs = seqNumbers.map(seqNumber);
    const wait = Math.min(Math.max(0, Math.trunc(options.waitMs ?? 0) || 0), MAX_WAIT_MS);
    return awaitSettled(
      this.clock,
      this.settledWaiters,
      () => this.read((c) => this.records.settled(c, seqs)),
      seqs,
      wait,
      options.signal,
      SETTLED_RECHECK_MS,
    );
  }

  async deleteSettled(queue: string, options: DeleteSettledOptions = {}): Promise<number> {
    queue = pgName(queue);
    return this.write((c, now) => this.records.deleteSettled(c, queue, options, now));
  }

  async promoteMessages(queue: string, seqNumbers: number[]): Promise<number> {
    queue = pgName(queue);
    const seqs = seqNumberList(seqNumbers);
    return this.write(async (c, now) => {
      const promoted = await this.records.promote(c, queue, seqs, now);
      if (promoted > 0) this.wakeLocal(c, { activated: [queue], scheduledFor: [] });
      return promoted;
    });
  }

  async removeMessages(queue: string, seqNumbers: number[]): Promise<number> {
    queue = pgName(queue);
    const seqs = seqNumberList(seqNumbers);
    return this.write(async (c, now) => {
      const removed = await this.records.remove(c, queue, seqs, now);
      this.notifySettled(c, removed);
      return removed.length;
    });
  }

  async heartbeat(worker: WorkerInfo, options: { staleAfterMs?: number } = {}): Promise<HeartbeatResult> {
    requireName(worker?.workerId, "worker");
    const stale =
      options.staleAfterMs && options.staleAfterMs > 0 ? options.staleAfterMs : DEFAULT_WORKER_STALE_MS;
    return this.write((c, now) => this.workers.heartbeat(c, worker, stale, now));
  }

  async listWorkers(): Promise<WorkerRecord[]> {
    return this.read((c) => this.workers.list(c));
  }

  async removeWorker(workerId: string): Promise<boolean> {
    return this.write((c) => this.workers.delete(c, workerId));
  }

  async acquireLock(name: string, owner: string, ttlMs: number): Promise<boolean> {
    requireName(name, "lock");
    requireName(owner, "lock owner");
    if (nonNegativeDuration(ttlMs, "ttl_ms") === 0)
      throw new InvalidArgumentError("mqlite: ttl_ms must be positive");
    return this.write((c, now) => this.namedLocks.acquire(c, name, owner, ttlMs, now));
  }

  async releaseLock(name: string, owner: string): Promise<boolean> {
    return this.write((c, now) => this.namedLocks.release(c, name, owner, now));
  }

  // --- the broker -------------------------------------------------------------------------------

  readiness(): Promise<Readiness> {
    if (this.closing)
      return Promise.resolve({ ready: false, reason: "closing", message: "mqlite: broker is closed" });
    return pgReadiness(this.db.pool, this.db.storeFailure);
  }

  status(): Promise<BrokerStatus> {
    return this.read(async (c) => {
      const started = performance.now();
      await c.q("SELECT 1");
      const pingMs = pingMsSince(started);
      const [size] = await c.q<{ size: number }>(DB_SIZE, [this.schema]);
      const [counts] = await c.q<{ queues: number; subscriptions: number }>(
        `SELECT (SELECT count(*) FROM queues WHERE kind = 'queue')::int AS queues,
                (SELECT count(*) FROM subscriptions)::int AS subscriptions`,
      );
      return {
        version: VERSION,
        backend: "postgres" as const,
        remote: false,
        location: `${redactDsn(this.dsn)} (schema ${this.schema})`,
        schemaVersion: String(PG_SCHEMA_VERSION),
        pingMs,
        dbSizeBytes: size?.size ?? 0,
        queues: counts?.queues ?? 0,
        subscriptions: counts?.subscriptions ?? 0,
        uptimeMs: this.clock.now() - this.openedAt,
        auth: false,
      };
    });
  }

  /**
   * Runs every background step once, now, on this node whether or not it leads: reaper, scheduler,
   * TTL sweep, janitors, DLQ retention. For tests with a manual clock and the loops switched off.
   */
  async runMaintenanceOnce(): Promise<MaintenanceResult> {
    const out = emptyResult();
    for (const step of ["reap", "schedule", "expire", "janitor", "retention"] as const) {
      mergeResult(out, await this.runMaintenanceStep(step));
    }
    return out;
  }

  private runMaintenanceStep(step: MaintenanceStep): Promise<MaintenanceResult> {
    return this.write(async (c, now) => {
      const out = emptyResult();
      const m = this.maintenance;
      if (step === "reap") {
        await m.reap(c, now, out);
        this.nextLease = await m.nextLeaseEnd(c);
      } else if (step === "schedule") {
        await m.schedule(c, now, out);
        this.nextDue = await m.nextScheduled(c);
      } else if (step === "expire") await m.expire(c, now, out);
      else if (step === "janitor") await m.janitor(c, now, out);
      else {
        await m.retention(c, this.dlqBounds, now, out);
        out.retentionDropped += await this.topicLog.compact(c, now, TOPIC_PURGE_LIMIT);
      }
      this.wakeLocal(c, { activated: out.activated, scheduledFor: [] });
      this.notifySettled(c, out.settled);
      return out;
    });
  }

  close(): Promise<void> {
    if (!this.closing) {
      this.closing = (async () => {
        this.loops.stop();
        this.waiters.close();
        this.settledWaiters.close();
        await this.node.close();
        await this.db.drain();
        await this.flushing;
        await this.db.close();
      })();
    }
    return this.closing;
  }

  // --- flows, message logs and the event log ------------------------------------------------------

  private readonly dependencyTable = new PgDependencies();
  private readonly messageLogs = new PgMessageLogs();
  private readonly eventLog = new PgEventLog();

  async sendFlow(nodes: FlowNode[]): Promise<number[]> {
    const prepared = prepareFlow(nodes, this.maxMessageBytes).map((n) => ({ ...n, queue: pgName(n.queue) }));
    const waiting = waitingNodes(prepared);
    return this.write(async (c, now) => {
      const seqs: number[] = [];
      for (const [i, n] of prepared.entries()) {
        const row = await this.queues.get(c, n.queue);
        if (row?.kind !== "queue") throw new NotFoundError(`mqlite: queue not found: ${n.queue}`);
        if (row.dedup_window_ms > 0)
          throw new InvalidArgumentError("mqlite: a flow cannot go to a queue with a dedup window");
        const sent = await this.sendIn(c, now, n.queue, [n.message], { scheduledAt: 0, ttlMs: 0 });
        const seq = sent.seqs[0]!;
        seqs.push(seq);
        if (waiting.has(i)) await this.dependencyTable.hold(c, seq);
        if (n.parent !== undefined) await this.dependencyTable.add(c, seq, seqs[n.parent]!, n.failParent);
      }
      return seqs;
    });
  }

  async releaseDependents(seqNumbers?: number[]): Promise<number> {
    let children: number[] | undefined;
    if (seqNumbers !== undefined) {
      if (!Array.isArray(seqNumbers)) throw new InvalidArgumentError("mqlite: seq_numbers must be a list");
      children = seqNumbers.map(seqNumber);
      if (children.length === 0) return 0;
    } else {
      // The sweep: find them with a read, so that an idle sweep writes nothing.
      children = await this.read((c) => this.dependencyTable.settledChildren(c));
      if (children.length === 0) return 0;
    }
    return this.write(async (c, now) => {
      const out = await this.dependencyTable.release(c, children, now);
      if (out.activated.size > 0) this.wakeLocal(c, { activated: out.activated, scheduledFor: [] });
      this.notifySettled(c, out.failed);
      return out.failed.length + out.activated.size;
    });
  }

  async dependencies(seq: number): Promise<Dependency[]> {
    const s = seqNumber(seq);
    return this.read((c) => this.dependencyTable.list(c, s));
  }

  async appendMessageLog(queue: string, seq: number, lockToken: string, lines: string[]): Promise<number> {
    queue = pgName(queue);
    checkLogLines(lines);
    const s = seqNumber(seq);
    return this.write((c, now) => this.messageLogs.append(c, queue, s, lockToken, lines, now));
  }

  async messageLog(seq: number, options?: { offset?: number; limit?: number }): Promise<MessageLogPage> {
    const s = seqNumber(seq);
    const { offset, limit } = logPage(options);
    return this.read((c) => this.messageLogs.read(c, s, offset, limit));
  }

  async appendEvents(events: EventInput[]): Promise<void> {
    checkEvents(events);
    if (events.length === 0) return;
    await this.write((c, now) => this.eventLog.append(c, this.schema, events, now));
  }

  async readEvents(afterId: number, options: { limit?: number } = {}): Promise<EventPage> {
    const after = integer(afterId, "after_id");
    const limit = eventLimit(options.limit);
    return this.read((c) => this.eventLog.read(c, after, limit));
  }

  // --- job metrics and debounced sends ------------------------------------------------------------

  private readonly jobMetrics = new PgJobMetrics();

  async addMetrics(increments: MetricIncrement[]): Promise<void> {
    const merged = checkIncrements(increments);
    if (merged.length === 0) return;
    await this.one((c, now) => this.jobMetrics.add(c, merged, now));
  }

  async readMetrics(kind: MetricKind, query?: MetricsQuery): Promise<MetricPoint[]> {
    const k = metricKind(kind);
    const range = metricsRange(query, this.clock.now());
    return this.read((c) => this.jobMetrics.read(c, k, range));
  }
}

/**
 * The notifications that wake long-polls on every node (and arm the leader's scheduler) for what a
 * transaction did: `q:<queue>` for a queue that gained claimable messages, `s:<epoch ms>` for the
 * earliest new scheduled delivery. They are sent after the commit (see `notifyNodes`).
 */
function payloadsOf(what: { activated: Iterable<string>; scheduledFor: number[] }): string[] {
  const payloads = [...what.activated].map((q) => `q:${q}`);
  if (what.scheduledFor.length > 0) payloads.push(`s:${Math.min(...what.scheduledFor)}`);
  return payloads;
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

/** A read's or lease's limit: absent 100, ≤0 nothing, at most 1000. */
function topicLimit(limit: number | undefined): number {
  if (limit === undefined || limit === null) return DEFAULT_TOPIC_READ;
  const n = Math.trunc(Number(limit));
  if (!Number.isFinite(n) || n <= 0) return 0;
  return Math.min(n, MAX_TOPIC_READ);
}
