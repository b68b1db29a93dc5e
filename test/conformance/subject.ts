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
  close(): Promise<void>;
}

export type SubjectFactory = (options?: SubjectOptions) => Promise<Subject>;
