/** The source of "now" for every stored time (epoch milliseconds, UTC). Injectable for tests. */
export interface Clock {
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to: deterministic tests of leases, TTLs and schedules. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }
  now(): number {
    return this.current;
  }
  /** Moves time forward by `ms`. */
  advance(ms: number): void {
    this.current += ms;
  }
  /** Sets the time. */
  set(ms: number): void {
    this.current = ms;
  }
}
