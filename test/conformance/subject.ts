import type { Broker } from "../../src/contract/broker.js";
import type { DlqBounds } from "../../src/engine/dead-letters.js";
import type { ManualClock } from "../../src/store/clock.js";

/** What a conformance case may ask of the implementation under test. */
export interface SubjectOptions {
  /** Broker-wide DLQ retention defaults. */
  dlqRetention?: Partial<DlqBounds>;
  /** Largest message body. */
  maxMessageBytes?: number;
}

/**
 * One implementation under test: the `Broker` to drive, the manual clock behind it, and a way to
 * run the background loops once (the loops themselves are off, so every case is deterministic).
 */
export interface Subject {
  broker: Broker;
  clock: ManualClock;
  /** Runs reaper, scheduler, TTL sweep, janitors and DLQ retention once, at the clock's now. */
  maintain(): Promise<void>;
  close(): Promise<void>;
}

export type SubjectFactory = (options?: SubjectOptions) => Promise<Subject>;
