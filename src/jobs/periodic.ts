import { Cron } from "croner";
import type { QueueCore } from "./core.js";
import { QueueError } from "./errors.js";
import type { PeriodicOptions, PeriodicTask } from "./types.js";

/** How long a tick's firing lease lives (only one worker fires a tick; the lease outlives any late peer). */
const TICK_LEASE_MS = 24 * 3600 * 1000;
/** Node timers cannot wait longer than ~24.8 days; a far tick is re-armed in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Entry {
  task: PeriodicTask;
  args: unknown[];
  cron: Cron;
  timer?: NodeJS.Timeout;
  /** The last tick this process fired (never fired twice, even when a timer runs early). */
  lastTick?: number;
}

/**
 * Periodic jobs: each worker process arms a timer for the next tick of every enabled entry; at the
 * tick, the workers race for a named lease on `(namespace, name, tick)` and only the winner
 * enqueues, so a tick fires once across all workers and processes.
 */
export class PeriodicScheduler {
  private readonly entries = new Map<string, Entry>();
  private owner: string | undefined;

  constructor(private readonly core: QueueCore) {}

  register(name: string, taskName: string, cron: string, options: PeriodicOptions = {}): number | undefined {
    let parsed: Cron;
    try {
      parsed = new Cron(cron, { paused: true, ...(options.timezone ? { timezone: options.timezone } : {}) });
    } catch (err) {
      throw new QueueError(`invalid cron "${cron}": ${(err as Error).message}`);
    }
    this.clear(name);
    const task: PeriodicTask = {
      name,
      taskName,
      cron,
      queue: options.queue ?? "default",
      enabled: options.enabled !== false,
      ...(options.timezone ? { timezone: options.timezone } : {}),
    };
    const next = parsed.nextRun(new Date())?.getTime();
    if (next !== undefined) task.nextRun = next;
    this.entries.set(name, { task, args: options.args ?? [], cron: parsed });
    if (this.owner) this.arm(name);
    return next;
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
    const next = e.cron.nextRun(new Date(Math.max(Date.now(), (e.lastTick ?? 0) + 1)))?.getTime();
    e.task.nextRun = next;
    if (next === undefined) return;
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
      if (!(await broker.acquireLock(lease, owner, TICK_LEASE_MS))) return;
      await this.core.enqueue(e.task.taskName, e.args, {
        queue: e.task.queue,
        uniqueKey: `periodic:${name}:${tick}`,
      });
    } catch (err) {
      this.core.logger.warn({ periodic: name, err: String(err) }, "periodic job could not be enqueued");
    }
  }
}
