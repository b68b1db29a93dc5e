import type { Logger } from "../../contract/logger.js";
import type { Message } from "../../contract/types.js";
import type { Loops } from "../../core/loops.js";
import type { Effects } from "../../core/port.js";
import type { Waiters } from "../../core/waiters.js";
import type { WriteContext } from "../../core/write-context.js";

/** What the SQLite broker keeps for a write's announcements: waiters, loops, counters, the log. */
export interface EffectTargets {
  readonly waiters: Waiters<Message>;
  /** Parked `awaitSettled` calls, by sequence number. */
  readonly settledWaiters: Waiters;
  readonly loops: Loops;
  readonly logger: Logger;
  readonly sentCounts: Map<string, number>;
  readonly completedCounts: Map<string, number>;
  /** Wakes `awaitSettled` for these messages after the commit. */
  settleAfterCommit(ctx: WriteContext, seqs: readonly number[]): void;
}

/**
 * A write's announcements on SQLite (see `Effects`), one object per write. A class rather than an
 * object of closures: a send makes one of these per message, and its methods cost nothing to make.
 *
 * The whole group commit runs synchronously, so a receiver that is not parked on a queue when a
 * write announces it cannot park before the commit either: only parked queues get hooks.
 */
export class WriteEffects implements Effects {
  constructor(
    private readonly to: EffectTargets,
    private readonly ctx: WriteContext,
    private readonly now: number,
  ) {}

  /**
   * Parked receivers that can take the messages do so in this same transaction (a hand-off, saving
   * them a transaction and a wake-up), taking no more than `count` when the write knows it; every
   * receiver still parked is woken after the commit.
   */
  activated(queue: string, count?: number): void {
    const waiters = this.to.waiters;
    if (!waiters.has(queue)) return;
    const now = this.now;
    if (waiters.hasTakers(queue)) this.ctx.beforeCommit((c) => waiters.handOff(queue, c, now, count));
    this.ctx.afterCommit(() => waiters.notify(queue));
  }

  scheduled(at: number): void {
    const loops = this.to.loops;
    this.ctx.afterCommit(() => loops.armScheduler(at));
  }

  settled(seqs: readonly number[]): void {
    if (!this.to.settledWaiters.idle) this.to.settleAfterCommit(this.ctx, seqs);
  }

  completed(queue: string, n: number): void {
    if (n > 0) this.ctx.afterCommit(() => add(this.to.completedCounts, queue, n));
  }

  leased(at: number): void {
    this.to.loops.armReaper(at);
  }

  sent(queue: string, n: number): void {
    this.ctx.afterCommit(() => add(this.to.sentCounts, queue, n));
  }

  filterFailed(f: { topic: string; subscription: string; err: string }): void {
    const logger = this.to.logger;
    this.ctx.afterCommit(() =>
      logger.warn(f, "filter failed at run time; message not routed to this subscription"),
    );
  }
}

function add(counts: Map<string, number>, key: string, n: number): void {
  counts.set(key, (counts.get(key) ?? 0) + n);
}
