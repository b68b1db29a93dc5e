import type { Broker } from "../contract/broker.js";
import type { Message } from "../contract/types.js";

/** Locks renewed per RenewBatch call (the broker's cap). */
const RENEW_CHUNK = 512;
/** Pace when the deadline is unknown. */
const UNKNOWN_PACE_MS = 1000;
const MIN_PACE_MS = 50;

/**
 * When to renew next: a third of what is left, at least 50 ms, yet never past half of it, so a
 * renewal is never scheduled at or after the deadline; 1 s when the deadline is unknown (0).
 */
export function renewPace(deadline: number, now: number): number {
  if (deadline === 0) return UNKNOWN_PACE_MS;
  const remaining = deadline - now;
  if (remaining <= 0) return 0;
  const pace = Math.min(Math.max(remaining / 3, MIN_PACE_MS), remaining / 2);
  return pace < 1 ? 0 : Math.floor(pace);
}

/**
 * Keeps a received batch's locks alive while it is printed and settled (a slow pipe must not
 * make a lease lapse and the messages come again). Best effort: a failed renewal is not reported;
 * the worst outcome is a redelivery.
 */
export class LockRenewer {
  private deadline: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly broker: Broker,
    private readonly queue: string,
    private readonly messages: Message[],
    private readonly now: () => number = Date.now,
  ) {
    this.deadline = Math.min(...messages.map((m) => m.lockedUntil ?? 0).filter((t) => t > 0), Infinity);
    if (!Number.isFinite(this.deadline)) this.deadline = 0;
  }

  start(): this {
    if (this.messages.length > 0) this.schedule();
    return this;
  }

  /** Stops renewing and waits for a renewal in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(
      () => {
        this.running = this.renew().finally(() => this.schedule());
      },
      renewPace(this.deadline, this.now()),
    );
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    let tightest = Infinity;
    for (let i = 0; i < this.messages.length && !this.stopped; i += RENEW_CHUNK) {
      const chunk = this.messages.slice(i, i + RENEW_CHUNK);
      try {
        const results = await this.broker.renewBatch(
          this.queue,
          chunk.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken ?? "" })),
        );
        for (const r of results) if (r.ok && r.lockedUntil) tightest = Math.min(tightest, r.lockedUntil);
      } catch {
        // best effort: the old deadline stands until it passes
      }
    }
    // An unknown result replaces a deadline only once that deadline has passed.
    if (Number.isFinite(tightest)) this.deadline = tightest;
    else if (this.deadline <= this.now()) this.deadline = 0;
  }
}
