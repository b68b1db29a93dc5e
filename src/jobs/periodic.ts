import { Cron } from "croner";
import type { QueueCore } from "./core.js";
import { QueueError } from "./errors.js";
import type { PeriodicOptions, PeriodicTask } from "./types.js";

/** When a periodic job fires: exactly one of a cron expression and a fixed interval. */
export type PeriodicSchedule = { cron: string; everyMs?: undefined } | { everyMs: number; cron?: undefined };

/** How long a tick's firing lease lives (only one worker fires a tick; the lease outlives any late peer). */
const TICK_LEASE_MS = 24 * 3600 * 1000;
/** Node timers cannot wait longer than ~24.8 days; a far tick is re-armed in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The smallest `everyMs`. */
export const MIN_EVERY_MS = 100;

interface Entry {
  task: PeriodicTask;
  args: unknown[];
  /** The first tick strictly after `from` (epoch ms), if any. */
  next(from: number): number | undefined;
  /** How long a tick's firing lease lives. */
  leaseMs: number;
  timer?: NodeJS.Timeout;
  /** The last tick this process fired (never fired twice, even when a timer runs early). */
  lastTick?: number;
}

/**
 * Periodic jobs: each worker process arms a timer for the next tick of every enabled entry; at the
 * tick, the workers race for a named lease on `(namespace, name, tick)` and only the winner
 * enqueues, so a tick fires once across all workers and processes. Ticks are the same instants in
 * every process: a cron's, or the multiples of `everyMs` since the epoch.
 */
export class PeriodicScheduler {
  private readonly entries = new Map<string, Entry>();
  private owner: string | undefined;

  constructor(private readonly core: QueueCore) {}

  register(
    name: string,
    taskName: string,
    schedule: PeriodicSchedule,
    options: PeriodicOptions = {},
  ): number | undefined {
    const { next, leaseMs, shown } = parseSchedule(schedule, options.timezone);
    this.clear(name);
    const task: PeriodicTask = {
      name,
      taskName,
      ...shown,
      queue: options.queue ?? "default",
      enabled: options.enabled !== false,
      ...(options.timezone && shown.cron !== undefined ? { timezone: options.timezone } : {}),
    };
    const first = next(Date.now());
    if (first !== undefined) task.nextRun = first;
    this.entries.set(name, { task, args: options.args ?? [], next, leaseMs });
    if (this.owner) this.arm(name);
    return first;
  }

  list(): PeriodicTask[] {
    return [...this.entries.values()].map((e) => ({ ...e.task }));
  }

  delete(name: string): boolean {
    this.clear(name);
    return this.entries.delete(name);
  }

  setEnabled(name: string, enabled: boolean): boolean {
    const e = this.entries.get(name);
    if (!e) return false;
    e.task.enabled = enabled;
    this.clear(name);
    if (enabled && this.owner) this.arm(name);
    return true;
  }

  /** A worker starts firing (the first worker of the process owns the timers). */
  attach(workerId: string): void {
    if (this.owner) return;
    this.owner = workerId;
    for (const name of this.entries.keys()) this.arm(name);
  }

  detach(workerId: string): void {
    if (this.owner !== workerId) return;
    this.owner = undefined;
    for (const name of this.entries.keys()) this.clear(name);
  }

  private clear(name: string): void {
    const e = this.entries.get(name);
    if (e?.timer) clearTimeout(e.timer);
    if (e) e.timer = undefined;
  }

  private arm(name: string): void {
    const e = this.entries.get(name);
    if (!e?.task.enabled) return;
    const next = e.next(Math.max(Date.now(), e.lastTick ?? 0));
    if (next === undefined) {
      delete e.task.nextRun;
      return;
    }
    e.task.nextRun = next;
    const wait = next - Date.now();
    e.timer = setTimeout(
      () => {
        if (wait > MAX_TIMER_MS) this.arm(name);
        else void this.fire(name, next).finally(() => this.arm(name));
      },
      Math.min(Math.max(0, wait), MAX_TIMER_MS),
    );
    e.timer.unref();
  }

  private async fire(name: string, tick: number): Promise<void> {
    const e = this.entries.get(name);
    const owner = this.owner;
    if (!e || !owner) return;
    e.lastTick = tick;
    // Wait for the tick itself: timers may fire a little early.
    const early = tick - Date.now();
    if (early > 0) await new Promise((r) => setTimeout(r, early));
    try {
      const broker = await this.core.broker();
      const lease = `periodic:${this.core.namespace ?? ""}:${name}:${tick}`;
      if (!(await broker.acquireLock(lease, owner, e.leaseMs))) return;
      await this.core.enqueue(e.task.taskName, e.args, {
        queue: e.task.queue,
        uniqueKey: `periodic:${name}:${tick}`,
      });
    } catch (err) {
      this.core.logger.warn({ periodic: name, err: String(err) }, "periodic job could not be enqueued");
    }
  }
}

/** The tick function, lease length and shown fields of a schedule; refuses a bad one. */
function parseSchedule(
  schedule: PeriodicSchedule,
  timezone: string | undefined,
): {
  next: (from: number) => number | undefined;
  leaseMs: number;
  shown: Pick<PeriodicTask, "cron" | "everyMs">;
} {
  const { cron, everyMs } = schedule as { cron?: unknown; everyMs?: unknown };
  if ((cron === undefined) === (everyMs === undefined))
    throw new QueueError("a periodic job needs exactly one of cron and everyMs");
  if (everyMs !== undefined) {
    if (typeof everyMs !== "number" || !Number.isSafeInteger(everyMs) || everyMs < MIN_EVERY_MS)
      throw new QueueError(`everyMs must be a whole number of ms, at least ${MIN_EVERY_MS}`);
    return {
      next: (from) => Math.floor(from / everyMs) * everyMs + everyMs,
      // A late peer fires the same tick well within this; the lease rows of past ticks are swept.
      leaseMs: Math.min(TICK_LEASE_MS, Math.max(60_000, 2 * everyMs)),
      shown: { everyMs },
    };
  }
  if (typeof cron !== "string") throw new QueueError("cron must be a string");
  let parsed: Cron;
  try {
    parsed = new Cron(cron, { paused: true, ...(timezone ? { timezone } : {}) });
  } catch (err) {
    throw new QueueError(`invalid cron "${cron}": ${(err as Error).message}`);
  }
  return {
    next: (from) => parsed.nextRun(new Date(from + 1))?.getTime(),
    leaseMs: TICK_LEASE_MS,
    shown: { cron },
  };
}
