import { ClosedError } from "../contract/errors.js";
import type { MaxBytes } from "../contract/types.js";
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

/**
 * What a parked receiver would claim: a peek-lock batch of its one queue, up to `max`, each lease
 * capped at `capMs` (0: no cap). A send may store its rows already locked for that receiver (a
 * hand-off in the sender's own statement, see `Waiters.hold`); `name` is the queue as the receiver
 * named it, set on each message when given.
 */
export interface PlainClaim {
  max: number;
  capMs: number;
  name?: string;
  /** The most bytes of bodies and properties its answer takes (see `answerBytes`). */
  maxBytes?: MaxBytes;
}

/** A parked receiver a sender holds while its statement runs (see `Waiters.hold`). */
export interface Held<T> {
  readonly claim: PlainClaim;
  /** What the statement locked for the receiver once it committed; none: a plain wake-up. */
  release(items: T[] | undefined): void;
}

/**
 * One parked long-poll on one key. A class, not a set of closures: a busy worker parks after every
 * job, and its methods cost nothing to make.
 */
class Parked<T> implements Waiter<T> {
  readonly woken: Promise<boolean>;
  private resolve!: (woken: boolean) => void;
  private reject!: (err: Error) => void;
  private done = false;
  private items: T[] | undefined;
  private timeout: NodeJS.Timeout | undefined;
  private onAbort: (() => void) | undefined;
  /** A sender holds it (`hold`): its statement's outcome ends the wait. */
  private held = false;
  /** The deadline passed, or the wait was aborted or cancelled, while held. */
  private lapsed = false;

  constructor(
    private readonly owner: Waiters<T>,
    readonly queue: string,
    readonly take: Take<T> | undefined,
    private readonly signal: AbortSignal | undefined,
    readonly plain: (() => PlainClaim | undefined) | undefined,
  ) {
    this.woken = new Promise<boolean>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Starts the deadline and listens for the abort. */
  arm(ms: number): void {
    this.timeout = setTimeout(() => this.wake(false), ms);
    if (this.signal) {
      this.onAbort = () => this.wake(false);
      this.signal.addEventListener("abort", this.onAbort, { once: true });
    }
  }

  wake(woken: boolean): void {
    // While a sender holds it, its statement may lock messages for it: the wait ends with that
    // answer (`release`), or a message would stay locked for nobody until its lease lapsed.
    if (this.held) {
      if (!woken) this.lapsed = true;
      return;
    }
    if (this.end()) this.resolve(woken);
  }

  /** Taken by a sender (`Waiters.hold`): out of the key's set, its end deferred to `release`. */
  hold(): void {
    this.held = true;
    this.detach();
  }

  release(items: T[] | undefined): void {
    this.held = false;
    if (items && items.length > 0) this.deliver(items);
    else this.wake(!this.lapsed);
  }

  fail(err: Error): void {
    if (this.end()) this.reject(err);
  }

  /** Hands over what `take` claimed (or a plain wake-up when the transaction rolled back). */
  deliver(items: T[] | undefined): void {
    this.items = items;
    this.wake(true);
  }

  /** Leaves the key's set at once, so that nothing else (a second hand-off) reaches it. */
  detach(): void {
    this.owner.detach(this);
  }

  taken(): T[] | undefined {
    return this.items;
  }

  cancel(): void {
    this.wake(false);
  }

  /** Ends the wait once; false when it had already ended. */
  private end(): boolean {
    if (this.done) return false;
    this.done = true;
    clearTimeout(this.timeout);
    if (this.onAbort) this.signal?.removeEventListener("abort", this.onAbort);
    this.owner.ended(this);
    return true;
  }
}

/**
 * In-process wake-ups for long-polls, per queue. A receive registers its waiter *before* its
 * second claim attempt, so a message committed in between cannot be missed.
 *
 * Commits by other processes are noticed through `PRAGMA data_version`, checked on a short timer
 * only while someone waits (`watchExternal`), never by scanning tables.
 */
export class Waiters<T = unknown> {
  private readonly byQueue = new Map<string, Set<Parked<T>>>();
  private readonly parked = new Set<Parked<T>>();
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private wakeUps = 0;
  /** The queues where nothing is claimable as of `drainedEpoch` (see `noteDrained`). */
  private readonly drained = new Set<string>();
  private drainedEpoch = -1;

  constructor(
    /** Returns true when another connection has committed since the last call. */
    private readonly externalChange: () => boolean,
    private readonly pollMs = 50,
    /**
     * Every commit that makes messages claimable, this process's or another's, is announced
     * through `notify` (or `notifyAll`) as it is heard of, not found by polling: see `epoch`.
     */
    readonly announcesAll = false,
  ) {}

  /**
   * Counts the wake-ups announced so far, of any key. When `announcesAll`, a long-poll that read it
   * before a claim which found nothing, and finds it unchanged once parked, knows that nothing
   * became claimable since the claim began that would not wake it: it needs no second claim.
   */
  get epoch(): number {
    return this.wakeUps;
  }

  /**
   * Notes that nothing on `queue` is claimable as of `epoch`: a long-poll parked there after a claim
   * that found nothing at that epoch, and a sender handed it messages that left nothing claimable
   * behind (a send that leaves some announces them). Kept only while `epoch` is still the current
   * one and every claimable commit is announced (`announcesAll`).
   */
  noteDrained(queue: string, epoch: number): void {
    if (!this.announcesAll || epoch !== this.wakeUps) return;
    // Any wake-up ends every note: only the current epoch's are kept.
    if (this.drainedEpoch !== epoch) {
      this.drained.clear();
      this.drainedEpoch = epoch;
    }
    this.drained.add(queue);
  }

  /**
   * True when nothing on `queue` has become claimable since `noteDrained`: no wake-up was announced
   * since, so a claim there would find nothing, and a long-poll may park without one.
   */
  isDrained(queue: string): boolean {
    return this.drainedEpoch === this.wakeUps && this.drained.has(queue);
  }

  /**
   * Parks until `notify(queue)`, the deadline, an abort, or close (which rejects with `ClosedError`).
   * With `take`, a sender's transaction may claim for this waiter (`handOff`).
   */
  wait(
    queue: string,
    deadline: number,
    now: number,
    signal?: AbortSignal,
    take?: Take<T>,
    plain?: () => PlainClaim | undefined,
  ): Waiter<T> {
    if (this.closed) return { woken: Promise.reject(new ClosedError()), taken: () => undefined, cancel() {} };
    const parked = new Parked<T>(this, queue, take, signal, plain);
    let set = this.byQueue.get(queue);
    if (!set) {
      set = new Set();
      this.byQueue.set(queue, set);
    }
    set.add(parked);
    this.parked.add(parked);
    this.count++;
    this.startWatching();
    parked.arm(Math.max(0, deadline - now));
    return parked;
  }

  /** Takes a waiter out of its queue's set (it was woken, or a hand-off reached it). */
  detach(entry: Parked<T>): void {
    const set = this.byQueue.get(entry.queue);
    if (!set) return;
    set.delete(entry);
    if (set.size === 0) this.byQueue.delete(entry.queue);
  }

  /** A waiter has ended: it no longer counts. */
  ended(entry: Parked<T>): void {
    this.detach(entry);
    this.parked.delete(entry);
    // The watch timer stops at its next tick if nobody parked again by then: an idle worker
    // parks after every job, and re-arming an interval each time costs more than a spare tick.
    this.count--;
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

  /**
   * For a send to `queue` that can store its rows locked for a receiver: the first waiter parked
   * there whose claim is plain (`PlainClaim`), taken out of the set so that nothing else reaches it
   * while the send's statement runs. The sender must `release` it, with what the statement locked
   * for it once committed, or with nothing (the waiter then wakes to claim for itself).
   */
  hold(queue: string): Held<T> | undefined {
    const set = this.byQueue.get(queue);
    if (!set) return undefined;
    for (const e of set) {
      const claim = e.plain?.();
      if (!claim) continue;
      e.hold();
      return {
        claim,
        release: (items) => {
          // Released with nothing: a wake-up, so that the receiver claims for itself (`epoch`).
          if (!items || items.length === 0) this.wakeUps++;
          e.release(items);
        },
      };
    }
    return undefined;
  }

  /** Wakes every waiter of `queue`. */
  notify(queue: string): void {
    this.wakeUps++;
    const set = this.byQueue.get(queue);
    if (!set) return;
    for (const e of [...set]) e.wake(true);
  }

  /** Wakes everyone (another process committed something). */
  notifyAll(): void {
    this.wakeUps++;
    for (const set of [...this.byQueue.values()]) for (const e of [...set]) e.wake(true);
  }

  /** True while nobody is parked at all. */
  get idle(): boolean {
    return this.count === 0;
  }

  /** True while some long-poll is parked on `queue`. */
  has(queue: string): boolean {
    return this.byQueue.has(queue);
  }

  /** Rejects every parked long-poll with `ClosedError` and refuses new ones. */
  close(): void {
    this.closed = true;
    for (const p of [...this.parked]) p.fail(new ClosedError());
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
