import { CancelledError, ResourceExhaustedError } from "../contract/errors.js";

/** Seconds a large body refused for want of room is told to wait (`Retry-After`). */
export const LARGE_BODY_RETRY_AFTER_S = 1;

/** The slowest a large body holding room may arrive by default: 1 MiB/s (a 32 MiB body: 37 s). */
export const DEFAULT_MIN_BYTES_PER_SECOND = 2 ** 20;
/** Time a large body holding room has before its rate counts. */
export const DEFAULT_ARRIVAL_GRACE_MS = 5_000;

/** The longest a Node timer waits (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A large body that found no room in the budget within the wait: 429 `resource_exhausted` with `Retry-After`. */
export class LargeBodyLimitError extends ResourceExhaustedError {
  readonly retryAfterS = LARGE_BODY_RETRY_AFTER_S;
}

/**
 * A large body that did not arrive in time once it held its room (see `LargeBodyBudget.arrivalMs`):
 * 429 `resource_exhausted`, and the connection closes with the rest of the body unread.
 */
export class LargeBodyTooSlowError extends LargeBodyLimitError {}

interface Waiter {
  bytes: number;
  grant: () => void;
}

/**
 * The bytes of large request bodies (256 KiB and up) a server holds at once. Each costs about
 * twice its size while it is read and decoded (its bytes, then its items as they are decoded; the
 * buffers it arrives in are collected as it comes, see `collectArrivedChunks`), so eight maximal
 * requests at once took a gigabyte; within the budget, requests beyond it wait their turn (in
 * arrival order) before a byte of theirs is read, and one that waited `maxWaitMs` in vain is
 * refused (`LargeBodyLimitError`). A body not yet read stays in the client's socket, not here.
 */
export class LargeBodyBudget {
  private used = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    /** The budget; at least one maximal body (a larger body is counted as the whole budget). */
    readonly limit: number,
    readonly maxWaitMs: number,
    /** The slowest a body holding room may arrive, on average after `graceMs` (see `arrivalMs`). */
    readonly minBytesPerSecond = DEFAULT_MIN_BYTES_PER_SECOND,
    readonly graceMs = DEFAULT_ARRIVAL_GRACE_MS,
  ) {}

  /**
   * How long a body of `bytes` may take to arrive once it holds its room: `graceMs`, plus its size
   * at `minBytesPerSecond`. Without it a client that declares 32 MiB and sends a byte now and then
   * held the whole budget until the request timeout (60 s), every other large body waiting.
   */
  arrivalMs(bytes: number): number {
    // A rate that is not a positive number sets no bound (a timer cannot wait longer than this).
    if (!(this.minBytesPerSecond > 0)) return MAX_TIMER_MS;
    return Math.min(
      MAX_TIMER_MS,
      Math.max(0, this.graceMs) + Math.ceil((bytes / this.minBytesPerSecond) * 1000),
    );
  }

  /** Bytes taken by bodies being read or decoded now. */
  get inUse(): number {
    return this.used;
  }

  /** Bodies waiting for room. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Takes `bytes` of the budget, in turn, and resolves with the function that gives them back (once;
   * later calls do nothing). Rejects with `LargeBodyLimitError` after `maxWaitMs` without room, or
   * `CancelledError` when `signal` aborts (the client went away) while it waits.
   */
  take(bytes: number, signal?: AbortSignal): Promise<() => void> {
    const n = Math.min(bytes, this.limit);
    if (this.waiting.length === 0 && this.used + n <= this.limit) return Promise.resolve(this.hold(n));
    if (signal?.aborted) return Promise.reject(new CancelledError());
    return new Promise((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        const at = this.waiting.indexOf(waiter);
        if (at !== -1) this.waiting.splice(at, 1);
        // A small body behind a large one may fit now that the one ahead of it left.
        this.grantWaiting();
      };
      const waiter: Waiter = {
        bytes: n,
        grant: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve(this.hold(n));
        },
      };
      const onAbort = () => {
        leave();
        reject(new CancelledError());
      };
      const timer = setTimeout(() => {
        leave();
        reject(
          new LargeBodyLimitError(
            `mqlite: large request bodies fill this server's budget (${this.limit} bytes); retry later`,
          ),
        );
      }, this.maxWaitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /**
   * Takes up to `max` bytes that are free now, without waiting: none while a body waits its turn
   * (an answer does not overtake it). Answers take their room this way (see `AnswerRoom`).
   */
  takeFree(max: number): number {
    if (this.waiting.length > 0) return 0;
    const n = Math.max(0, Math.min(max, this.limit - this.used));
    this.used += n;
    return n;
  }

  /** Takes `n` bytes even past the limit (an answer already read); bodies then wait until it is back under. */
  force(n: number): void {
    this.used += n;
  }

  /** Gives back bytes taken by `takeFree` or `force`. */
  giveBack(n: number): void {
    if (n <= 0) return;
    this.used -= n;
    this.grantWaiting();
  }

  private hold(n: number): () => void {
    this.used += n;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.used -= n;
      this.grantWaiting();
    };
  }

  /** Lets in the waiters at the head of the line that fit, in order (none overtakes another). */
  private grantWaiting(): void {
    while (this.waiting.length > 0 && this.used + this.waiting[0]!.bytes <= this.limit) {
      this.waiting.shift()!.grant();
    }
  }
}
