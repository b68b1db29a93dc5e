import { NotFoundError } from "../contract/errors.js";
import type { QueueCore } from "./core.js";
import { QueueError, QueueFullError } from "./errors.js";
import { engineQueue } from "./naming.js";
import type { QueueLimits } from "./types.js";

/**
 * `maxPending`, FlexiQ's producer-side admission cap: before an enqueue, the queue's waiting jobs
 * are counted in the store (every process's), and the enqueue is refused when it would pass the
 * cap. Count, then insert: not atomic, so producers racing at the cap may pass it by a few.
 */
export class Admission {
  private readonly caps = new Map<string, number>();

  constructor(private readonly core: QueueCore) {}

  configure(queue: string, limits: QueueLimits): void {
    if (typeof queue !== "string" || queue.length === 0) throw new QueueError("a queue name is required");
    if (limits === null || typeof limits !== "object") throw new QueueError("queue limits must be an object");
    for (const key of Object.keys(limits)) {
      if (key !== "maxPending")
        throw new QueueError(`configureQueue: unknown limit "${key}" (maxPending is supported)`);
    }
    const cap = limits.maxPending;
    if (cap === undefined) {
      this.caps.delete(queue);
      return;
    }
    if (!Number.isInteger(cap) || cap < 1) throw new QueueError("maxPending must be a positive integer");
    this.caps.set(queue, cap);
  }

  /** Whether any queue has a cap: without one, an enqueue has nothing to check. */
  get limited(): boolean {
    return this.caps.size > 0;
  }

  /**
   * Refuses with `QueueFullError` when any queue's waiting jobs plus its new ones would exceed its
   * cap: all or nothing. `jobs` maps a queue name to how many jobs go to it (and its namespace).
   */
  async check(jobs: Map<string, { namespace: string | undefined; count: number }>): Promise<void> {
    if (this.caps.size === 0) return;
    for (const [queue, { namespace, count }] of jobs) {
      const cap = this.caps.get(queue);
      if (cap === undefined) continue;
      const pending = await this.waiting(engineQueue(namespace, queue));
      if (pending + count > cap) throw new QueueFullError(queue, pending, cap);
    }
  }

  private async waiting(name: string): Promise<number> {
    const broker = this.core.openBroker() ?? (await this.core.broker());
    try {
      const s = await broker.stats(name);
      return s.active + s.deferred + s.scheduled;
    } catch (err) {
      if (err instanceof NotFoundError) return 0;
      throw err;
    }
  }
}
