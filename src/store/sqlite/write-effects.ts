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
 * Per transaction (its writes' context), per queue: how many messages its writes made claimable
 * there (infinite when one did not say) and the latest write's time, for one hand-off at its commit.
 */
const handOffs = new WeakMap<WriteContext, Map<string, { budget: number; now: number }>>();

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
   * them a transaction and a wake-up), taking no more than the writes of the transaction made
   * claimable on that queue when each write knows its `count`; every receiver still parked is
   * woken after the commit.
   */
  activated(queue: string, count = Number.POSITIVE_INFINITY): void {
    const waiters = this.to.waiters;
    if (!waiters.has(queue)) return;
    if (waiters.hasTakers(queue)) {
      // One hand-off per queue at the commit, with what every write of the transaction activated
      // there, at the latest write's time: two abandons in one group give a receiver asking for
      // two both messages, not the first one alone.
      let pending = handOffs.get(this.ctx);
      if (!pending) {
        pending = new Map();
        handOffs.set(this.ctx, pending);
      }
      const had = pending.get(queue);
      if (had) {
        had.budget += count;
        had.now = Math.max(had.now, this.now);
      } else {
        const mine = { budget: count, now: this.now };
        pending.set(queue, mine);
        const all = pending;
        this.ctx.beforeCommit((c) => {
          all.delete(queue);
          waiters.handOff(queue, c, mine.now, mine.budget);
        });
      }
    }
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
