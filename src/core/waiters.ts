import { ClosedError } from "../contract/errors.js";
import type { WriteContext } from "./write-context.js";

/** A parked long-poll: resolves `true` when woken, `false` at its deadline or on abort. */
export interface Waiter<T = unknown> {
  readonly woken: Promise<boolean>;
  /** What a hand-off claimed for this waiter inside a sender's transaction (read once woken). */
  taken(): T[] | undefined;
  cancel(): void;
}

/**
 * A parked receiver's claim, run by `handOff` inside the transaction that made messages claimable:
 * the receiver gets them when that transaction commits, without a transaction of its own. It
 * claims at most `limit` (as many as the transaction made claimable, when that is known).
 */
export type Take<T> = (ctx: WriteContext, now: number, limit: number) => T[];

/** One parked long-poll on one key. */
interface Entry<T> {
  wake(woken: boolean): void;
  take: Take<T> | undefined;
  /** Hands over what `take` claimed (or a plain wake-up when the transaction rolled back). */
  deliver(items: T[] | undefined): void;
  /** Leaves the key's set at once, so that nothing else (a second hand-off) reaches it. */
  detach(): void;
}

/**
 * In-process wake-ups for long-polls, per queue. A receive registers its waiter *before* its
 * second claim attempt, so a message committed in between cannot be missed.
 *
 * Commits by other processes are noticed through `PRAGMA data_version`, checked on a short timer
 * only while someone waits (`watchExternal`), never by scanning tables.
 */
export class Waiters<T = unknown> {
  private readonly byQueue = new Map<string, Set<Entry<T>>>();
  private readonly rejectors = new Set<(err: Error) => void>();
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    /** Returns true when another connection has committed since the last call. */
    private readonly externalChange: () => boolean,
    private readonly pollMs = 50,
  ) {}

  /**
   * Parks until `notify(queue)`, the deadline, an abort, or close (which rejects with `ClosedError`).
   * With `take`, a sender's transaction may claim for this waiter (`handOff`).
   */
  wait(queue: string, deadline: number, now: number, signal?: AbortSignal, take?: Take<T>): Waiter<T> {
    if (this.closed) return { woken: Promise.reject(new ClosedError()), taken: () => undefined, cancel() {} };
    let done: (woken: boolean) => void = () => {};
    let fail: (err: Error) => void = () => {};
    let timeout: NodeJS.Timeout | undefined;
    let taken: T[] | undefined;
    let detached = false;
    const detach = () => {
      if (detached) return;
      detached = true;
      const set = this.byQueue.get(queue);
      set?.delete(entry);
      if (set?.size === 0) this.byQueue.delete(queue);
    };
    const cleanup = () => {
      clearTimeout(timeout);
      signal?.removeEventListener("abort", onAbort);
      detach();
      this.rejectors.delete(fail);
      // The watch timer stops at its next tick if nobody parked again by then: an idle worker
      // parks after every job, and re-arming an interval each time costs more than a spare tick.
      this.count--;
    };
    const onAbort = () => done(false);
    const woken = new Promise<boolean>((resolve, reject) => {
      let settled = false;
      done = (w) => {
        if (settled) return;
        settled = true;
        cleanup();
        resolve(w);
      };
      fail = (err) => {
        if (settled) return;
        settled = true;
        cleanup();
        reject(err);
      };
    });
    const entry: Entry<T> = {
      wake: (w) => done(w),
      take,
      deliver: (items) => {
        taken = items;
        done(true);
      },
      detach,
    };
    let set = this.byQueue.get(queue);
    if (!set) {
      set = new Set();
      this.byQueue.set(queue, set);
    }
    set.add(entry);
    this.rejectors.add(fail);
    this.count++;
    this.startWatching();
    timeout = setTimeout(() => done(false), Math.max(0, deadline - now));
    signal?.addEventListener("abort", onAbort, { once: true });
    return { woken, taken: () => taken, cancel: () => done(false) };
  }

  /** True when a waiter parked on `queue` can take messages inside a sender's transaction. */
  hasTakers(queue: string): boolean {
    const set = this.byQueue.get(queue);
    if (!set) return false;
    for (const e of set) if (e.take) return true;
    return false;
  }

  /**
   * Inside a sender's transaction (a before-commit hook): lets each parked waiter of `queue` that
   * can take claim what it wants, in the order they parked, until they took `budget` messages (the
   * rows the transaction made claimable, when known: a claim past them would find nothing). A
   * waiter that took something leaves every set now and gets its messages when the transaction
   * commits, or a plain wake-up (to claim again) if it rolls back.
   */
  handOff(queue: string, ctx: WriteContext, now: number, budget = Number.POSITIVE_INFINITY): void {
    const set = this.byQueue.get(queue);
    if (!set) return;
    for (const e of [...set]) {
      if (budget <= 0) break;
      if (!e.take) continue;
      const items = e.take(ctx, now, budget);
      if (items.length === 0) continue;
      budget -= items.length;
      e.detach();
      ctx.afterCommit(() => e.deliver(items));
      ctx.afterRollback(() => e.deliver(undefined));
    }
  }

  /** Wakes every waiter of `queue`. */
  notify(queue: string): void {
    const set = this.byQueue.get(queue);
    if (!set) return;
    for (const e of [...set]) e.wake(true);
  }

  /** Wakes everyone (another process committed something). */
  notifyAll(): void {
    for (const set of [...this.byQueue.values()]) for (const e of [...set]) e.wake(true);
  }

  /** True while some long-poll is parked on `queue`. */
  has(queue: string): boolean {
    return this.byQueue.has(queue);
  }

  /** Rejects every parked long-poll with `ClosedError` and refuses new ones. */
  close(): void {
    this.closed = true;
    for (const fail of [...this.rejectors]) fail(new ClosedError());
    this.stopWatching();
  }

  private startWatching(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.count === 0) {
        this.stopWatching();
        return;
      }
      try {
        if (this.externalChange()) this.notifyAll();
      } catch {
        // the next tick tries again; a closed database stops the timer through close()
      }
    }, this.pollMs);
    this.timer.unref();
  }

  private stopWatching(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
