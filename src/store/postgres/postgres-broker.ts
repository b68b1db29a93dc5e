import type { Broker } from "../../contract/broker.js";
import { ClosedError, InternalError, NotFoundError } from "../../contract/errors.js";
import { type Logger, stderrLogger } from "../../contract/logger.js";
import { messageOf } from "../../contract/message-of.js";
import type { BrokerStatus, Message, OutgoingMessage, Readiness, SendOptions } from "../../contract/types.js";
import type { Clock } from "../../core/clock.js";
import { systemClock } from "../../core/clock.js";
import { CoreBroker } from "../../core/core-broker.js";
import { type DlqBounds, NO_DLQ_BOUNDS } from "../../core/dlq-bounds.js";
import { compileFilter } from "../../core/filters.js";
import type { Loops } from "../../core/loops.js";
import { type PreparedMessage, prepareMessages } from "../../core/outgoing.js";
import { pingMsSince } from "../../core/ping.js";
import { type Dialect, type Effects, runAsync, type Verb, type WriteScope } from "../../core/port.js";
import type { QueueRow } from "../../core/queue-config.js";
import { recoverLeases } from "../../core/verbs/maintenance.js";
import { type SendAt, type Sent, sendAt, send as sendVerb } from "../../core/verbs/send.js";
import { Waiters } from "../../core/waiters.js";
import { VERSION } from "../../version.js";
import { type Conn, Db } from "./db.js";
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
import { PgSubscriptions } from "./subscriptions.js";
import { PgTopicLog } from "./topic-log.js";

const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;
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
  protected readonly dialect: Dialect = {
    stepsHoldTheLoop: false,
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
  protected readonly loops: Loops;
  private readonly node: PgNode;
  private readonly completedCounts = new Map<string, number>();
  private openedAt = 0;
  private missedNotifications = false;
  private readonly pending = new Set<string>();
  private flushing: Promise<void> | undefined;

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
    // Every node's commits are announced: this node's at commit, the others' through NOTIFY.
    this.waiters = new Waiters<Message>(
      () => {
        const missed = this.missedNotifications;
        this.missedNotifications = false;
        return missed;
      },
      undefined,
      true,
    );
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
      settled: (seqs) => this.settleAfterCommit(c, seqs),
      completed: (queue, n) => this.countCompleted(c, queue, n),
      // The leader's reaper arms from what its reaps see (leases of every node).
      leased: () => {},
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

  /**
   * A cached row is current while its config version is (`SendOps.insertFresh` guards on it): a
   * send to it goes as one guarded statement without BEGIN/COMMIT.
   */
  protected cachedQueue(queue: string): QueueRow | undefined {
    return this.queues.cached(pgName(queue));
  }

  protected forgetQueue(queue: string): void {
    this.queues.forget(pgName(queue));
  }

  /**
   * A send that met a queue deleted under it (its subscriptions changed meanwhile) is rolled back
   * whole; it is retried once with a fresh view before `not_found` is reported.
   */
  protected override async sendWrite<T>(verb: (w: WriteScope) => Verb<T>): Promise<T> {
    try {
      return await this.queueWrite(verb);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      return this.queueWrite(verb);
    }
  }

  /**
   * Runs the application's SQL and sends in one transaction (the transactional outbox). A transient
   * failure before COMMIT re-runs `fn`, so it must do nothing but database work through `t`.
   */
  tx<T>(fn: (t: PgTransaction) => Promise<T>): Promise<T> {
    return this.queueOwnWrite(() =>
      this.write(async (c, now) => {
        const t: PgTransaction = {
          query: (text, values) => c.q(text, values),
          send: async (queue, messages, options = {}) => {
            const at = sendAt(options);
            const prepared = prepareMessages(messages, this.maxMessageBytes);
            return (await this.sendIn(c, now, queue, prepared, at)).seqs;
          },
        };
        return fn(t);
      }),
    );
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
      pgOps(c, this.shared),
    );
  }

  // --- the broker -------------------------------------------------------------------------------

  protected storageReadiness(): Promise<Readiness> {
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

  protected async closeStorage(): Promise<void> {
    // The last commits' notifications go out on the node's connection: the writes finish and their
    // notifications are sent before that connection ends (ended under them, they failed).
    await this.db.drain();
    await this.flushing;
    await this.node.close();
    await this.db.close();
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
