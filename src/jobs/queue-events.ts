import type { Broker } from "../contract/broker.js";
import { QueueError } from "./errors.js";
import { SHARED_EVENTS, type SharedEvent } from "./event-recorder.js";
import { acquireBroker } from "./host.js";
import type { QueueEventMap } from "./types.js";

/** Where a `QueueEvents` reads, and from where. */
export interface QueueEventsOptions {
  /** A SQLite file (the same as the queues'). */
  dbPath?: string;
  /** `postgres://…` or a SQLite path (wins over `dbPath`). */
  dsn?: string;
  /** PostgreSQL only: the schema (default `mqlite`). */
  schema?: string;
  /** A broker (embedded, or a served one through `connect(url)`); it stays open at `close()`. */
  broker?: Broker;
  /** Only the events of jobs of this namespace (default: jobs of queues without one). */
  namespace?: string;
  /**
   * Resume after this event id (a previous listener's `lastEventId`): every event stored since is
   * delivered, as long as the log still holds it. Default: only events stored from now on.
   */
  lastEventId?: number;
  /** How often the log is read when it had nothing new (default 100 ms). */
  pollMs?: number;
}

/** Where an event sits in the event log. */
export interface EventMeta {
  /**
   * Its row's id: pass the last one seen as `lastEventId` to resume after it. Like events of one
   * burst (the enqueues of one `enqueueMany`) share a row, so they share the id; they are delivered
   * together.
   */
  id: number;
  /** When it was stored (epoch ms). */
  at: number;
}

type Listener<E extends SharedEvent> = (payload: QueueEventMap[E], meta: EventMeta) => void;

/**
 * The job events of every process on the same broker (a file, a PostgreSQL database, or a served
 * broker): `job.enqueued`, `job.started`, `job.progress`, `job.completed`, `job.failed`,
 * `job.retrying`, `job.dead` and `job.cancelled`, read from the broker's bounded event log with a
 * cursor, in the order they were stored.
 *
 * ```ts
 * const events = new QueueEvents({ dbPath: "jobs.db" });
 * events.on("job.completed", ({ jobId }) => console.log("done", jobId));
 * // …
 * await events.close();
 * ```
 */
export class QueueEvents {
  private readonly listeners = new Map<SharedEvent, Set<Listener<never>>>();
  private readonly brokerPromise: Promise<Broker>;
  private readonly release: (() => Promise<void>) | undefined;
  private readonly namespace: string | undefined;
  private readonly pollMs: number;
  private cursor: number | undefined;
  private stopped = false;
  private wake: (() => void) | undefined;
  private readonly loop: Promise<void>;
  private readonly ready: Promise<void>;

  constructor(options: QueueEventsOptions = {}) {
    if (options.broker) {
      this.brokerPromise = Promise.resolve(options.broker);
    } else {
      const location = options.dsn || options.dbPath;
      if (!location) throw new QueueError("QueueEvents needs a dbPath, a dsn or a broker");
      const pooled = acquireBroker(location, options.schema ? { schema: options.schema } : {});
      this.brokerPromise = pooled.broker;
      this.release = pooled.release;
    }
    const pollMs = options.pollMs ?? 100;
    if (!Number.isFinite(pollMs) || pollMs < 1) throw new QueueError("pollMs must be at least 1");
    this.pollMs = pollMs;
    this.namespace = options.namespace || undefined;
    if (options.lastEventId !== undefined) {
      if (!Number.isSafeInteger(options.lastEventId) || options.lastEventId < 0)
        throw new QueueError("lastEventId must be a non-negative integer");
      this.cursor = options.lastEventId;
    }
    this.ready = this.start();
    this.loop = this.ready.then(
      () => this.run(),
      () => {},
    );
  }

  /** Resolves once the listener reads (its starting cursor is known); rejects when the broker cannot open. */
  waitUntilReady(): Promise<void> {
    return this.ready;
  }

  /** The id of the last event delivered (or the starting cursor): where a new listener resumes. */
  get lastEventId(): number {
    return this.cursor ?? 0;
  }

  /** Listens to an event; a throwing listener does not stop the others (its error is dropped). */
  on<E extends SharedEvent>(event: E, listener: Listener<E>): this {
    if (!SHARED_EVENTS.includes(event)) throw new QueueError(`QueueEvents has no event "${event}"`);
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener as Listener<never>);
    return this;
  }

  off<E extends SharedEvent>(event: E, listener: Listener<E>): this {
    this.listeners.get(event)?.delete(listener as Listener<never>);
    return this;
  }

  private emit(event: SharedEvent, payload: unknown, meta: EventMeta): void {
    for (const l of [...(this.listeners.get(event) ?? [])]) {
      try {
        (l as (p: unknown, m: EventMeta) => void)(payload, meta);
      } catch {
        // listeners observe; their failures are theirs
      }
    }
  }

  /** Stops reading and releases the broker (one passed in `options.broker` stays open). */
  async close(): Promise<void> {
    if (this.stopped) return this.loop;
    this.stopped = true;
    this.wake?.();
    await this.loop;
    await this.release?.();
  }

  private async start(): Promise<void> {
    const broker = await this.brokerPromise;
    if (this.cursor === undefined) this.cursor = (await broker.readEvents(0, { limit: 0 })).lastId;
  }

  private async run(): Promise<void> {
    const broker = await this.brokerPromise;
    while (!this.stopped) {
      let full = false;
      try {
        const page = await broker.readEvents(this.cursor ?? 0, { limit: 1000 });
        for (const e of page.events) {
          this.cursor = e.id;
          if (!SHARED_EVENTS.includes(e.type as SharedEvent)) continue;
          let data: Record<string, unknown>;
          try {
            data = JSON.parse(e.data) as Record<string, unknown>;
          } catch {
            continue;
          }
          const { namespace, jobIds, each, ...payload } = data;
          if ((namespace ?? undefined) !== this.namespace) continue;
          const meta = { id: e.id, at: e.at };
          // A run of like events is one row (see EventRecorder): one event per job, with the
          // values of its own per-job fields.
          if (Array.isArray(jobIds)) {
            const perJob = typeof each === "object" && each !== null ? Object.entries(each) : [];
            jobIds.forEach((jobId, i) => {
              const event: Record<string, unknown> = { jobId, ...payload };
              for (const [key, values] of perJob) if (Array.isArray(values)) event[key] = values[i];
              this.emit(e.type as SharedEvent, event, meta);
            });
          } else this.emit(e.type as SharedEvent, payload, meta);
        }
        full = page.events.length === 1000;
      } catch {
        // The broker is unreachable for now (a served broker restarting): try again after a pause.
      }
      if (!full && !this.stopped) await this.pause();
    }
  }

  private pause(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.pollMs);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
