import type { Broker } from "../../src/contract/broker.js";
import type { ManualClock } from "../../src/core/clock.js";
import type { DlqBounds } from "../../src/core/dlq-bounds.js";

/** What a conformance case may ask of the implementation under test. */
export interface SubjectOptions {
  /** Broker-wide DLQ retention defaults. */
  dlqRetention?: Partial<DlqBounds>;
  /** Largest message body. */
  maxMessageBytes?: number;
  /**
   * A store that outlives the broker process (a file, a database server), so that `restart()` can
   * close the broker and open a new one on the same data.
   */
  durable?: boolean;
  /** Only with `durable: true` on a file store: hold the file exclusively (fail-fast for others). */
  exclusive?: boolean;
}

/**
 * The transactional outbox of a store: the application's own row and a send, written in one
 * transaction. Each dialect has its own `tx` (SQLite synchronous, PostgreSQL awaited); a remote client
 * has none, so the remote subject offers the one of the broker it serves.
 */
export interface Outbox {
  /** Creates the application's table `orders(id text primary key)` in the store. */
  setup(): Promise<void>;
  /**
   * In one transaction: inserts the order `id`, sends `body` to `queue`, and then throws if `fail`
   * (so that nothing may commit).
   */
  place(id: string, queue: string, body: string, fail: boolean): Promise<void>;
  /** How many orders with this id the store holds. */
  count(id: string): Promise<number>;
}

/**
 * One implementation under test: the `Broker` to drive, the manual clock behind it, and a way to
 * run the background loops once (the loops themselves are off, so every case is deterministic).
 */
export interface Subject {
  /** The broker under test (replaced by `restart()`). */
  broker: Broker;
  clock: ManualClock;
  /** Runs reaper, scheduler, TTL sweep, janitors and DLQ retention once, at the clock's now. */
  maintain(): Promise<void>;
  /**
   * Only with `durable: true`: closes the broker as a crash would leave it (locks held, nothing
   * settled) and opens a new broker, with the same clock, on the same data. Start-up recovery runs
   * at the clock's now.
   */
  restart?(): Promise<void>;
  /**
   * Only with `durable: true`: closes the broker, writes `version` as the store's newest schema
   * version (as a newer build would have), and opens the broker again, rejecting as open does.
   */
  restartAtSchemaVersion?(version: number): Promise<void>;
  /**
   * Only with `durable: true`: opens another broker on the same store, as another process would
   * (closed with the subject). Rejects as that open does.
   */
  openPeer?(): Promise<Broker>;
  /** Only with `durable: true`: the store's transactional outbox. */
  outbox?: Outbox;
  close(): Promise<void>;
}

export type SubjectFactory = (options?: SubjectOptions) => Promise<Subject>;

/** What kind of store is under a subject: the cases that differ by design by store branch on it. */
export interface SubjectTraits {
  /**
   * `file`: a SQLite file (several processes may share it; `exclusive` makes a second opener fail
   * fast). `server`: a database server (any number of nodes share it; there is no exclusive mode).
   */
  store: "file" | "server";
}
