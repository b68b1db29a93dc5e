import type { Logger } from "../contract/logger.js";
import type { Clock } from "./clock.js";
import type { MaintenanceResult } from "./maintenance-result.js";

export type MaintenanceStep = "reap" | "schedule" | "expire" | "janitor" | "retention";

export interface LoopsDeps {
  clock: Clock;
  run(step: MaintenanceStep): Promise<MaintenanceResult>;
  /** The earliest scheduled delivery time, if any. */
  nextScheduled(): number | undefined;
  /** The earliest lease end, if any (without it the reaper runs every period only). */
  nextLeaseEnd?: () => number | undefined;
  reclaim?: () => void;
  logger: Logger;
}

/** Periods of the background loops (ms): the longest each waits between runs. */
export const LOOP_PERIODS = {
  reap: 1000,
  schedule: 1000,
  expire: 10_000,
  janitor: 60_000,
  retention: 60_000,
  reclaim: 60_000,
} as const;

/** The shortest wait a timed step arms for (a burst of due rows is taken in one pass). */
const MIN_ARMED_DELAY_MS = 2;

/**
 * A step that runs at least every `period` ms and, when armed for a time, no later than that
 * time; after each run it re-arms for the next time its rows fall due.
 */
class TimedStep {
  private timer: NodeJS.Timeout | undefined;
  private at = Number.POSITIVE_INFINITY;

  constructor(
    private readonly loops: { readonly running: boolean; tick(step: MaintenanceStep): Promise<boolean> },
    private readonly step: MaintenanceStep,
    private readonly periodMs: number,
    private readonly clock: Clock,
    private readonly nextDue: () => number | undefined,
  ) {}

  arm(at: number): void {
    if (!this.loops.running) return;
    const now = this.clock.now();
    const when = Math.min(at, now + this.periodMs);
    if (this.timer && when >= this.at) return;
    clearTimeout(this.timer);
    this.at = when;
    this.timer = setTimeout(() => void this.fire(), Math.max(MIN_ARMED_DELAY_MS, when - now));
    this.timer.unref();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.at = Number.POSITIVE_INFINITY;
  }

  private async fire(): Promise<void> {
    this.timer = undefined;
    this.at = Number.POSITIVE_INFINITY;
    const ok = await this.loops.tick(this.step);
    if (!this.loops.running) return;
    // A failing step waits its period: re-arming for a row it could not move would spin.
    if (!ok) return this.arm(Number.POSITIVE_INFINITY);
    let next: number | undefined;
    try {
      next = this.nextDue();
    } catch {
      next = undefined;
    }
    this.arm(next ?? Number.POSITIVE_INFINITY);
  }
}

/**
 * The background loops. The scheduler and the reaper do not just tick every second: each re-arms
 * itself for its earliest due row (a delayed job, a backoff; a lease's end), so a short delay is
 * honoured promptly and a lapsed lock returns its message as it lapses.
 */
export class Loops {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly scheduler: TimedStep;
  private readonly reaper: TimedStep;
  running = false;
  private readonly busy = new Set<MaintenanceStep>();

  constructor(private readonly deps: LoopsDeps) {
    this.scheduler = new TimedStep(this, "schedule", LOOP_PERIODS.schedule, deps.clock, () =>
      deps.nextScheduled(),
    );
    this.reaper = new TimedStep(this, "reap", LOOP_PERIODS.reap, deps.clock, () => deps.nextLeaseEnd?.());
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    for (const step of ["expire", "janitor", "retention"] as const) {
      const t = setInterval(() => void this.tick(step), LOOP_PERIODS[step]);
      t.unref();
      this.timers.push(t);
    }
    if (this.deps.reclaim) {
      const reclaim = this.deps.reclaim;
      const t = setInterval(() => reclaim(), LOOP_PERIODS.reclaim);
      t.unref();
      this.timers.push(t);
    }
    const now = this.deps.clock.now();
    this.scheduler.arm(now);
    this.reaper.arm(now + LOOP_PERIODS.reap);
  }

  stop(): void {
    this.running = false;
    for (const t of this.timers.splice(0)) clearInterval(t);
    this.scheduler.stop();
    this.reaper.stop();
  }

  /** Makes the scheduler run no later than `at` (epoch ms), and at least every second. */
  armScheduler(at: number): void {
    this.scheduler.arm(at);
  }

  /** Makes the reaper run no later than `at` (a lease's end), and at least every second. */
  armReaper(at: number): void {
    this.reaper.arm(at);
  }

  /** Runs one step unless it is running already; false when it failed. */
  async tick(step: MaintenanceStep): Promise<boolean> {
    if (this.busy.has(step)) return true;
    this.busy.add(step);
    try {
      await this.deps.run(step);
      return true;
    } catch (err) {
      if (this.running) this.deps.logger.warn({ step, err: String(err) }, "background step failed");
      return false;
    } finally {
      this.busy.delete(step);
    }
  }
}
