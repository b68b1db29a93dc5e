import type { Broker } from "../../contract/broker.js";
import { type ConsumeHandler, type ConsumeOptions, type Consumer, consume } from "../../contract/consume.js";
import {
  ClosedError,
  InternalError,
  InvalidArgumentError,
  NameConflictError,
  NotFoundError,
} from "../../contract/errors.js";
import type { DebouncedSend, DebounceOptions, Dependency, FlowNode } from "../../contract/job-service.js";
import { type Logger, stderrLogger } from "../../contract/logger.js";
import { messageOf } from "../../contract/message-of.js";
import type { PublishResult } from "../../contract/topic-service.js";
import type { BrokerStatus, Message, OutgoingMessage, Readiness, SendOptions } from "../../contract/types.js";
import type { Clock } from "../../core/clock.js";
import { systemClock } from "../../core/clock.js";
import { CoreBroker } from "../../core/core-broker.js";
import { type DlqBounds, NO_DLQ_BOUNDS } from "../../core/dlq-bounds.js";
import { compileFilter } from "../../core/filters.js";
import { prepareFlow, waitingNodes } from "../../core/flow-input.js";
import type { Loops } from "../../core/loops.js";
import { checkDebounce } from "../../core/metrics-input.js";
import { type PreparedMessage, prepareMessages } from "../../core/outgoing.js";
import { pingMsSince } from "../../core/ping.js";
import { type Dialect, type Effects, runAsync } from "../../core/port.js";
import { integer, nonNegativeDuration, requireName, seqNumber } from "../../core/validate.js";
import { recoverLeases } from "../../core/verbs/maintenance.js";
import { Waiters } from "../../core/waiters.js";
import { VERSION } from "../../version.js";
import { type Conn, Db } from "./db.js";
import { PgDebounceWindows } from "./debounce-windows.js";
import { PgDependencies } from "./dependencies.js";
import { PgInserter, payloadsOf, type SendOutcome } from "./insert.js";
import { lockAll, xactLockKey } from "./locks.js";
import { migrate } from "./migrate.js";
import { PG_SCHEMA_VERSION } from "./migrations/index.js";
import { pgName } from "./names.js";
import { channelOf, NOTIFY, PgNode } from "./node.js";
import { type PgShared, pgOps } from "./ops.js";
import {
  DEFAULT_SCHEMA,
  type PostgresBrokerOptions,
  redactDsn,
  requireSchemaName,
  requireSynchronousCommit,
  splitSchemaParam,
} from "./options.js";
import { PgQueueRegistry } from "./queue-registry.js";
import { pgReadiness } from "./readiness.js";
import { Rerun } from "./rerun.js";
import { PgSettleOps } from "./settle.js";
import { PgSubscriptions } from "./subscriptions.js";
import { PgTopicLog } from "./topic-log.js";

const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;
const _MAX_WAIT_MS = 20_000;
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
  protected readonly dlqBounds: DlqBounds;
  private readonly queues = new PgQueueRegistry();
  private readonly subscriptions: PgSubscriptions;
  private readonly inserter: PgInserter;
  protected readonly dialect: Dialect = {
    write: (verb, options) => {
      const run = (alone: boolean) => (c: Conn, now: number) =>
        runAsync(verb({ now, effects: this.effectsOf(c) }), pgOps(c, this.shared, alone));
      return options?.oneStatement
        ? this.alone(run, options.signal)
        : this.write(run(false), options?.signal);
    },
    read: (verb) => this.read((c) => runAsync(verb(this.clock.now()), pgOps(c, this.shared))),
  };
  /** What the port's statements share across connections. */
  private readonly shared: PgShared;
  protected readonly waiters: Waiters<Message>;
  /** Wake-ups of `awaitSettled`, keyed by sequence number. */
  protected readonly settledWaiters: Waiters;
  protected override readonly settledRecheckMs = SETTLED_RECHECK_MS;
  private readonly topicLog = new PgTopicLog();
  private readonly loops: Loops;
  private readonly node: PgNode;
  private readonly completedCounts = new Map<string, number>();
  private openedAt = 0;
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
    this.subscriptions = new PgSubscriptions((source) => compileFilter(source, this.logger));
    this.shared = {
      schema: this.schema,
      queues: this.queues,
      subscriptions: this.subscriptions,
      topicLog: this.topicLog,
    };
    this.inserter = new PgInserter(this.schema, this.queues, this.subscriptions, this.logger);
    this.waiters = new Waiters<Message>(() => {
      const missed = this.missedNotifications;
      this.missedNotifications = false;
      return missed;
    });
    this.settledWaiters = new Waiters(() => false);
    this.loops = this.maintenanceLoops({ clock: this.clock, logger: this.logger });
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
    await this.db.tx((c) => runAsync(recoverLeases(this.clock.now()), pgOps(c, this.shared)));
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
      // The leader's reaper arms from what its reaps see (leases of every node).
      leased: () => {},
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

  /**
   * Runs a verb as one autocommit statement; again (with a fresh queue row) when its cached one was
   * stale, and in a transaction when it asks for one or stays stale.
   */
  private async alone<T>(
    run: (alone: boolean) => (c: Conn, now: number) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const once = run(true);
    const attempt = async (c: Conn, now: number): Promise<T | Rerun> => {
      try {
        return await once(c, now);
      } catch (err) {
        if (err instanceof Rerun) return err;
        throw err;
      }
    };
    for (let i = 0; i < 3; i++) {
      const out = await this.one(attempt, signal);
      if (!(out instanceof Rerun)) return out;
      if (out.inTransaction) break;
    }
    return this.write(run(false), signal);
  }

  private one<T>(fn: (c: Conn, now: number) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.closing) return Promise.reject(new ClosedError());
    return this.db.one((c) => fn(c, this.clock.now()), signal);
  }

  private read<T>(fn: (c: Conn) => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(new ClosedError());
    return this.db.read(fn);
  }

  // --- queues -----------------------------------------------------------------------------------

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

  async send(
    queue: string,
    messages: OutgoingMessage | OutgoingMessage[],
    options: SendOptions = {},
  ): Promise<number[]> {
    queue = pgName(queue);
    const scheduledAt = integer(options.scheduledAt, "scheduled_enqueue_time_ms");
    if (scheduledAt < 0)
      throw new InvalidArgumentError("mqlite: scheduled_enqueue_time_ms must not be negative");
    const ttlMs = nonNegativeDuration(options.ttlMs, "ttl_ms");
    const prepared = prepareMessages(messages, this.maxMessageBytes);
    if (prepared.length === 0) return [];
    const cached = this.queues.cached(queue);
    if (PgInserter.fastPathFor(cached, prepared)) {
      const fast = await this.one(async (c, now) => {
        if (scheduledAt > 0 && scheduledAt <= now) {
          throw new InvalidArgumentError("mqlite: scheduled_enqueue_time_ms must be in the future");
        }
        const visibleAt = scheduledAt > 0 ? scheduledAt : now;
        const r = await this.inserter.sendGuarded(c, cached, prepared, { now, visibleAt, ttlMs });
        if (r.fresh) this.wakeLocal(c, r.out);
        return r;
      });
      if (fast.fresh) return fast.out.seqs;
      this.queues.forget(queue);
    }
    return this.sendWithRetry((c, now) => this.sendPrepared(c, queue, prepared, scheduledAt, ttlMs, now));
  }

  /**
   * A send that met a queue deleted under it (its subscriptions changed meanwhile) is rolled back
   * whole; it is retried once with a fresh view before `not_found` is reported.
   */
  private async sendWithRetry<T>(fn: (c: Conn, now: number) => Promise<T>): Promise<T> {
    try {
      return await this.write(fn);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      return this.write(fn);
    }
  }

  schedule(
    queue: string,
    messages: OutgoingMessage | OutgoingMessage[],
    scheduledAt: number,
    options: Omit<SendOptions, "scheduledAt"> = {},
  ): Promise<number[]> {
    return this.send(queue, messages, { ...options, scheduledAt });
  }

  private async sendPrepared(
    c: Conn,
    name: string,
    messages: PreparedMessage[],
    scheduledAt: number,
    ttlMs: number,
    now: number,
  ): Promise<number[]> {
    if (scheduledAt > 0 && scheduledAt <= now) {
      throw new InvalidArgumentError("mqlite: scheduled_enqueue_time_ms must be in the future");
    }
    const visibleAt = scheduledAt > 0 ? scheduledAt : now;
    const out: SendOutcome = await this.inserter.send(c, name, messages, { now, visibleAt, ttlMs });
    this.wakeLocal(c, out);
    return out.seqs;
  }

  async cancel(queue: string, seq: number): Promise<void> {
    queue = pgName(queue);
    const s = seqNumber(seq);
    const found = await this.one((c) => new PgSettleOps(c).cancel(queue, s));
    if (!found) throw new NotFoundError("mqlite: no scheduled, never-delivered message with that seq_number");
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
          const scheduledAt = integer(options.scheduledAt, "scheduled_enqueue_time_ms");
          const ttlMs = nonNegativeDuration(options.ttlMs, "ttl_ms");
          return this.sendPrepared(
            c,
            queue,
            prepareMessages(messages, this.maxMessageBytes),
            scheduledAt,
            ttlMs,
            now,
          );
        },
      };
      return fn(t);
    });
  }

  // --- receiving and settling -------------------------------------------------------------------

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

  // --- topics -----------------------------------------------------------------------------------

  // --- job topics (TopicService) -----------------------------------------------------------------

  async publish(topic: string, message: OutgoingMessage, options: SendOptions = {}): Promise<PublishResult> {
    requireName(topic, "topic");
    const scheduledAt = integer(options.scheduledAt, "scheduled_enqueue_time_ms");
    if (scheduledAt < 0)
      throw new InvalidArgumentError("mqlite: scheduled_enqueue_time_ms must not be negative");
    const ttlMs = nonNegativeDuration(options.ttlMs, "ttl_ms");
    if (Array.isArray(message)) throw new InvalidArgumentError("mqlite: publish takes one message");
    const prepared = prepareMessages(message, this.maxMessageBytes);
    return this.sendWithRetry(async (c, now) => {
      if (await this.queues.get(c, topic)) {
        throw new NameConflictError(`mqlite: "${topic}" is a queue, not a topic`);
      }
      if (scheduledAt > 0 && scheduledAt <= now) {
        throw new InvalidArgumentError("mqlite: scheduled_enqueue_time_ms must be in the future");
      }
      const visibleAt = scheduledAt > 0 ? scheduledAt : now;
      const out = await this.inserter.send(c, topic, prepared, { now, visibleAt, ttlMs });
      this.wakeLocal(c, out);
      return out.published[0]!;
    });
  }

  // --- the job face's capabilities (JobService) ------------------------------------------------

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

  // --- flows -------------------------------------------------------------------------------------

  private readonly dependencyTable = new PgDependencies();

  async sendFlow(nodes: FlowNode[]): Promise<number[]> {
    const prepared = prepareFlow(nodes, this.maxMessageBytes).map((n) => ({ ...n, queue: pgName(n.queue) }));
    const waiting = waitingNodes(prepared);
    return this.write(async (c, now) => {
      const seqs: number[] = [];
      const out = { activated: new Set<string>(), scheduledFor: [] as number[] };
      for (const [i, n] of prepared.entries()) {
        const row = await this.queues.get(c, n.queue);
        if (row?.kind !== "queue") throw new NotFoundError(`mqlite: queue not found: ${n.queue}`);
        if (row.dedup_window_ms > 0)
          throw new InvalidArgumentError("mqlite: a flow cannot go to a queue with a dedup window");
        const sent = await this.inserter.send(c, n.queue, [n.message], { now, visibleAt: now, ttlMs: 0 });
        const seq = sent.seqs[0]!;
        seqs.push(seq);
        if (waiting.has(i)) await this.dependencyTable.hold(c, seq);
        else {
          for (const q of sent.activated) out.activated.add(q);
          out.scheduledFor.push(...sent.scheduledFor);
        }
        if (n.parent !== undefined) await this.dependencyTable.add(c, seq, seqs[n.parent]!, n.failParent);
      }
      this.wakeLocal(c, out);
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

  // --- debounced sends ---------------------------------------------------------------------------

  private readonly debounceWindows = new PgDebounceWindows();

  async sendDebounced(
    queue: string,
    message: OutgoingMessage,
    options: DebounceOptions,
  ): Promise<DebouncedSend> {
    const d = checkDebounce(options);
    const m: PreparedMessage = {
      ...prepareMessages(message, this.maxMessageBytes)[0]!,
      delayMs: 0,
      uniqueKey: null,
    };
    const name = pgName(queue);
    return this.write(async (c, now) => {
      const row = await this.queues.get(c, name);
      if (row?.kind !== "queue") throw new NotFoundError(`mqlite: queue not found: ${queue}`);
      await lockAll(c, [xactLockKey(this.schema, "debounce", name, d.key)]);
      const moved = await this.debounceWindows.slide(c, name, d, m.body, now);
      if (moved) {
        this.wakeLocal(c, { activated: [], scheduledFor: [moved.at] });
        return { seqNumber: moved.seq, created: false };
      }
      const sent = await this.inserter.send(c, name, [m], { now, visibleAt: now + d.windowMs, ttlMs: 0 });
      const seq = sent.seqs[0];
      if (seq === undefined || seq === 0)
        throw new InvalidArgumentError("mqlite: a debounced send matched a live message (dedup)");
      await this.debounceWindows.opened(c, name, d.key, seq, now);
      this.wakeLocal(c, { activated: sent.activated, scheduledFor: sent.scheduledFor });
      return { seqNumber: seq, created: true };
    });
  }
}
