import { ClosedError } from "../contract/errors.js";

/** A parked long-poll: resolves `true` when woken, `false` at its deadline or on abort. */
export interface Waiter {
  readonly woken: Promise<boolean>;
  cancel(): void;
}

/**
 * In-process wake-ups for long-polls, per queue. A receive registers its waiter *before* its
 * second claim attempt, so a message committed in between cannot be missed.
 *
 * Commits by other processes are noticed through `PRAGMA data_version`, checked on a short timer
 * only while someone waits (`watchExternal`), never by scanning tables.
 */
export class Waiters {
  private readonly byQueue = new Map<string, Set<(woken: boolean) => void>>();
  private readonly rejectors = new Set<(err: Error) => void>();
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    /** Returns true when another connection has committed since the last call. */
    private readonly externalChange: () => boolean,
    private readonly pollMs = 50,
  ) {}

  /** Parks until `notify(queue)`, the deadline, an abort, or close (which rejects with `ClosedError`). */
  wait(queue: string, deadline: number, now: number, signal?: AbortSignal): Waiter {
    if (this.closed) return { woken: Promise.reject(new ClosedError()), cancel() {} };
    let done: (woken: boolean) => void = () => {};
    let fail: (err: Error) => void = () => {};
    let timeout: NodeJS.Timeout | undefined;
    const cleanup = () => {
      clearTimeout(timeout);
      signal?.removeEventListener("abort", onAbort);
      this.byQueue.get(queue)?.delete(done);
      if (this.byQueue.get(queue)?.size === 0) this.byQueue.delete(queue);
      this.rejectors.delete(fail);
      this.count--;
      if (this.count === 0) this.stopWatching();
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
    let set = this.byQueue.get(queue);
    if (!set) {
      set = new Set();
      this.byQueue.set(queue, set);
    }
    set.add(done);
    this.rejectors.add(fail);
    this.count++;
    this.startWatching();
    timeout = setTimeout(() => done(false), Math.max(0, deadline - now));
    signal?.addEventListener("abort", onAbort, { once: true });
    return { woken, cancel: () => done(false) };
  }

  /** Wakes every waiter of `queue`. */
  notify(queue: string): void {
    const set = this.byQueue.get(queue);
    if (!set) return;
    for (const wake of [...set]) wake(true);
  }

  /** Wakes everyone (another process committed something). */
  notifyAll(): void {
    for (const set of [...this.byQueue.values()]) for (const wake of [...set]) wake(true);
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
