import type { Broker } from "./broker.js";
import { MqliteError } from "./errors.js";
import type { Message } from "./types.js";

/**
 * Thrown by a `consume` handler to dead-letter its message (`reject`) instead of abandoning it for
 * redelivery: for a message that can never succeed (malformed, refused by the business rules).
 */
export class DeadLetterError extends Error {
  constructor(
    /** The dead-letter reason (default `AppRequested`). */
    readonly reason = "",
    /** The dead-letter description (default the empty string). */
    readonly description = "",
  ) {
    super(description || reason || "dead-lettered by the handler");
    this.name = "DeadLetterError";
  }
}

/** What a `consume` handler gets beside its message. */
export interface ConsumeContext {
  /** Aborted when the consumer stops: a long handler may end early (its message is still settled). */
  signal: AbortSignal;
}

/** Runs for one message: resolving completes it; throwing abandons it (`DeadLetterError`: rejects it). */
export type ConsumeHandler = (message: Message, context: ConsumeContext) => unknown;

export interface ConsumeOptions {
  /** Handlers running at once. Default 1. */
  concurrency?: number;
  /**
   * Messages claimed ahead of a free handler, waiting locked in memory (their lease runs meanwhile).
   * Default 0: the consumer claims only as many as it has idle handlers. Released on stop.
   */
  prefetch?: number;
  /** Renew the lease of each running handler's message. Default true. */
  autoRenew?: boolean;
  /** Stop renewing a message this long after its handler started. Default 300000 (5 min); 0 = no limit. */
  maxAutoRenewMs?: number;
  /**
   * How often a running handler's lease is renewed. Default: half the lease left at receipt (as
   * read against this machine's clock), at least 1 s; 10 s when that cannot be told.
   */
  renewIntervalMs?: number;
  /** Long-poll of each receive, 0..20000 ms. Default 20000. */
  waitMs?: number;
  /** Stops the consumer when aborted (as `stop()`). */
  signal?: AbortSignal;
  /**
   * Hears the errors the loop absorbs: a failed receive (retried with backoff), settlement or renewal
   * failures (`lock_lost` among them), and the error that ends the consumer.
   */
  onError?: (error: unknown) => void;
}

/** A running `consume` loop. */
export interface Consumer {
  /**
   * Stops claiming, releases the prefetched messages not yet handed to a handler (their delivery is
   * not counted), lets running handlers finish and settles them. Resolves when all is done.
   */
  stop(): Promise<void>;
  /** Resolves once stopped; rejects with the error that stopped it (`not_found`, `closed`, ...). */
  readonly finished: Promise<void>;
}

/** Errors that no retry can mend: the consumer ends with them. */
const PERMANENT = new Set([
  "not_found",
  "unauthenticated",
  "permission_denied",
  "closed",
  "invalid_argument",
]);

const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 5000;
const RENEW_FLOOR_MS = 1000;
const RENEW_UNKNOWN_MS = 10_000;
const MAX_BATCH = 256;

function isPermanent(err: unknown): boolean {
  return err instanceof MqliteError && PERMANENT.has(err.code);
}

function isLockLost(err: unknown): boolean {
  return err instanceof MqliteError && err.code === "lock_lost";
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}

/**
 * A consumer loop over any `Broker` (the `Receiver` of MQLite's SDK, Azure Service Bus's
 * processor): claims messages of `queue` in peek-lock mode, runs `handler` for each with at most
 * `concurrency` running, completes a message whose handler resolved, abandons one whose handler threw
 * (rejects it for a `DeadLetterError`), renews the leases of running handlers, and backs off
 * (exponentially, up to 5 s) while receives fail. Every broker's `consume` is this function.
 */
/** What the consumer loop needs of a broker. */
export type ConsumeBroker = Pick<Broker, "receive" | "complete" | "abandon" | "reject" | "renew">;

export function consume(
  broker: ConsumeBroker,
  queue: string,
  handler: ConsumeHandler,
  options: ConsumeOptions = {},
): Consumer {
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
  const prefetch = Math.max(0, Math.floor(options.prefetch ?? 0));
  const autoRenew = options.autoRenew ?? true;
  const maxAutoRenewMs = Math.max(0, options.maxAutoRenewMs ?? 300_000);
  const waitMs = Math.min(20_000, Math.max(0, options.waitMs ?? 20_000));
  const report = (err: unknown) => {
    try {
      options.onError?.(err);
    } catch {
      // a listener's failure must not stop the loop
    }
  };

  const stopping = new AbortController();
  const buffered: Message[] = [];
  const running = new Set<Promise<void>>();
  let wake: (() => void) | undefined;
  let fatal: unknown;
  const nudge = () => {
    wake?.();
    wake = undefined;
  };
  const stop = () => {
    if (!stopping.signal.aborted) stopping.abort();
    nudge();
  };
  if (options.signal?.aborted) stop();
  options.signal?.addEventListener("abort", stop, { once: true });

  const settle = async (m: Message, error: unknown) => {
    const token = m.lockToken!;
    try {
      if (error === undefined) await broker.complete(queue, m.seqNumber, token);
      else if (error instanceof DeadLetterError)
        await broker.reject(queue, m.seqNumber, token, {
          reason: error.reason,
          description: error.description,
        });
      else await broker.abandon(queue, m.seqNumber, token);
    } catch (err) {
      report(err);
    }
  };

  const renewLoop = (m: Message, done: AbortSignal) => {
    if (!autoRenew) return;
    const left = (m.lockedUntil ?? 0) - Date.now();
    const every =
      options.renewIntervalMs ?? (left > 0 ? Math.max(RENEW_FLOOR_MS, left / 2) : RENEW_UNKNOWN_MS);
    const until = maxAutoRenewMs > 0 ? Date.now() + maxAutoRenewMs : Number.POSITIVE_INFINITY;
    void (async () => {
      for (;;) {
        await pause(every, done);
        if (done.aborted || Date.now() >= until) return;
        try {
          await broker.renew(queue, m.seqNumber, m.lockToken!);
        } catch (err) {
          report(err);
          if (isLockLost(err) || isPermanent(err)) return; // the lease is gone: renewing is over
        }
      }
    })();
  };

  const run = (m: Message) => {
    const finished = new AbortController();
    renewLoop(m, finished.signal);
    const task = (async () => {
      let error: unknown;
      try {
        await handler(m, { signal: stopping.signal });
      } catch (err) {
        error = err ?? new Error("handler threw");
      }
      await settle(m, error);
      finished.abort();
    })();
    running.add(task);
    void task.finally(() => {
      running.delete(task);
      dispatch();
      nudge();
    });
  };

  const dispatch = () => {
    while (!stopping.signal.aborted && running.size < concurrency && buffered.length > 0)
      run(buffered.shift()!);
  };

  /** Gives claimed messages back untouched (not counted as a delivery). */
  const release = async (messages: Message[]) => {
    await Promise.all(
      messages.map((m) =>
        broker.abandon(queue, m.seqNumber, m.lockToken!, { countDelivery: false }).catch(report),
      ),
    );
  };

  const loop = async () => {
    let backoff = 0;
    while (!stopping.signal.aborted) {
      const room = concurrency + prefetch - running.size - buffered.length;
      if (room <= 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        continue;
      }
      let got: Message[];
      try {
        got = await broker.receive(queue, {
          maxMessages: Math.min(room, MAX_BATCH),
          waitMs,
          signal: stopping.signal,
        });
        backoff = 0;
      } catch (err) {
        if (stopping.signal.aborted) break;
        report(err);
        if (isPermanent(err)) {
          fatal = err;
          stop();
          break;
        }
        backoff = backoff === 0 ? BACKOFF_FIRST_MS : Math.min(BACKOFF_MAX_MS, backoff * 2);
        await pause(backoff, stopping.signal);
        continue;
      }
      buffered.push(...got);
      dispatch();
    }
    // Stopping: what no handler has started goes back; running handlers finish and settle.
    await release(buffered.splice(0));
    while (running.size > 0) await Promise.all([...running]);
    options.signal?.removeEventListener("abort", stop);
    if (fatal !== undefined) throw fatal;
  };

  const finished = loop();
  // `finished` is the caller's to observe; an unobserved rejection is still reported through onError.
  finished.catch(() => {});
  return {
    finished,
    stop: async () => {
      stop();
      await finished.catch(() => {});
    },
  };
}
