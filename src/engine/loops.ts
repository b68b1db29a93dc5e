import type { Clock } from "../store/clock.js";
import type { Logger } from "./logger.js";
import type { MaintenanceResult } from "./maintenance.js";

export type MaintenanceStep = "reap" | "schedule" | "expire" | "janitor" | "retention";

export interface LoopsDeps {
  clock: Clock;
  run(step: MaintenanceStep): Promise<MaintenanceResult>;
  nextScheduled(): number | undefined;
  reclaim?: () => void;
  logger: Logger;
}

/** Periods of the background loops (ms). */
export const LOOP_PERIODS = {
  reap: 1000,
  schedule: 1000,
  expire: 10_000,
  janitor: 60_000,
  retention: 60_000,
  reclaim: 60_000,
} as const;

/** The shortest wait the scheduler arms for (a burst of due rows is taken in one pass). */
const MIN_SCHEDULER_DELAY_MS = 2;

/**
 * The background loops. The scheduler does not just tick every second: it re-arms itself for the
 * earliest scheduled delivery (backoffs, delayed jobs), so a short delay is honoured promptly.
 */
export class Loops {
  private readonly timers: NodeJS.Timeout[] = [];
  private schedulerTimer: NodeJS.Timeout | undefined;
  private schedulerAt = Number.POSITIVE_INFINITY;
  private running = false;
  private readonly busy = new Set<MaintenanceStep>();

  constructor(private readonly deps: LoopsDeps) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    for (const step of ["reap", "expire", "janitor", "retention"] as const) {
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
    this.armScheduler(this.deps.clock.now());
  }

  stop(): void {
    this.running = false;
    for (const t of this.timers.splice(0)) clearInterval(t);
    clearTimeout(this.schedulerTimer);
    this.schedulerTimer = undefined;
  }

  /** Makes the scheduler run no later than `at` (epoch ms), and at least every second. */
  armScheduler(at: number): void {
    if (!this.running) return;
    const now = this.deps.clock.now();
    const when = Math.min(at, now + LOOP_PERIODS.schedule);
    if (this.schedulerTimer && when >= this.schedulerAt) return;
    clearTimeout(this.schedulerTimer);
    this.schedulerAt = when;
    this.schedulerTimer = setTimeout(
      () => void this.runScheduler(),
      Math.max(MIN_SCHEDULER_DELAY_MS, when - now),
    );
    this.schedulerTimer.unref();
  }

  private async runScheduler(): Promise<void> {
    this.schedulerTimer = undefined;
    this.schedulerAt = Number.POSITIVE_INFINITY;
    await this.tick("schedule");
    if (!this.running) return;
    let next: number | undefined;
    try {
      next = this.deps.nextScheduled();
    } catch {
      next = undefined;
    }
    this.armScheduler(next ?? Number.POSITIVE_INFINITY);
  }

  private async tick(step: MaintenanceStep): Promise<void> {
    if (this.busy.has(step)) return;
    this.busy.add(step);
    try {
      await this.deps.run(step);
    } catch (err) {
      if (this.running) this.deps.logger.warn({ step, err: String(err) }, "background step failed");
    } finally {
      this.busy.delete(step);
    }
  }
}
