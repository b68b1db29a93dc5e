import type { ClaimGate } from "../../contract/job-service.js";
import type { Message } from "../../contract/types.js";
import type { Clock } from "../../core/clock.js";
import { waitAny } from "../../core/wait-any.js";
import type { Waiters } from "../../core/waiters.js";
import type { WriteContext } from "../../core/write-context.js";
import type { Claimer } from "./claim.js";
import type { ClaimGates } from "./claim-gates.js";
import type { QueueRegistry } from "./queue-registry.js";

export interface ReceiveAnyDeps {
  clock: Clock;
  write<T>(fn: (ctx: WriteContext, now: number) => T, signal?: AbortSignal): Promise<T>;
  queues: QueueRegistry;
  claimer: Claimer;
  gates: ClaimGates;
  /** The per-queue long-poll wake-ups (notified by every send in-process). */
  waiters: Waiters<Message>;
}

export interface ReceiveAnyRequest {
  queues: string[];
  max: number;
  waitMs: number;
  gates: ClaimGate[];
  /** Caps each claimed message's lease (ms; 0: no cap). */
  leaseCapMs: number;
  signal: AbortSignal | undefined;
}

interface ClaimOutcome {
  messages: Message[];
  /** When a gate-held subject may become claimable (the long-poll re-checks then). */
  retryAt: number | undefined;
}

/**
 * `receiveAny`: one claim transaction across several queues (in the order given), then a long-poll
 * on all of them. Gates make a claim skip held-back subjects; a long-poll that gates cut short is
 * re-checked when a token is due (rate) or shortly (concurrency caps).
 */
export class MultiReceiver {
  constructor(private readonly deps: ReceiveAnyDeps) {}

  async receive(req: ReceiveAnyRequest): Promise<Message[]> {
    const { clock } = this.deps;
    const deadline = clock.now() + req.waitMs;
    for (;;) {
      // Parked before the claim: a send committed while the claim runs cannot be missed, and an
      // idle worker needs one claim per wake-up, not two.
      const now = clock.now();
      // Once its own claim found nothing, a sender's transaction may claim for it (a hand-off: no
      // transaction of its own then); armed only then, so the two never both claim.
      let armed = false;
      const take = (_ctx: WriteContext, at: number, limit: number) =>
        armed && !req.signal?.aborted ? this.claimIn(req, at, limit).messages : [];
      const waiter =
        req.waitMs > 0 && now < deadline && !req.signal?.aborted
          ? waitAny(this.deps.waiters, req.queues, deadline, now, req.signal, take)
          : undefined;
      let got: ClaimOutcome;
      try {
        got = await this.claim(req);
      } catch (err) {
        waiter?.cancel();
        throw err;
      }
      if (got.messages.length > 0 || !waiter) {
        waiter?.cancel();
        return got.messages;
      }
      armed = true;
      let woken: boolean;
      if (got.retryAt !== undefined && got.retryAt < deadline) {
        // A gate holds messages back: look again when one may be claimable.
        let rechecking = false;
        const recheck = setTimeout(
          () => {
            rechecking = true;
            waiter.cancel();
          },
          Math.max(1, got.retryAt - clock.now()),
        );
        woken = (await waiter.woken) || rechecking;
        clearTimeout(recheck);
      } else {
        woken = await waiter.woken;
      }
      const taken = waiter.taken();
      if (taken) return taken;
      // Not woken: the wait ran its time (measured in real time, as receive's: an injected clock
      // need not move), or was aborted.
      if (!woken || req.signal?.aborted || clock.now() >= deadline) {
        // One last look at the deadline (a wake-up may have raced it).
        return req.signal?.aborted ? [] : (await this.claim(req)).messages;
      }
    }
  }

  private claim(req: ReceiveAnyRequest): Promise<ClaimOutcome> {
    return this.deps.write((_ctx, now) => this.claimIn(req, now), req.signal);
  }

  /**
   * The claim itself, inside a write transaction (its own, or a sender's in a hand-off, which
   * passes how many it may take).
   */
  private claimIn(req: ReceiveAnyRequest, now: number, limit = req.max): ClaimOutcome {
    const { queues, claimer, gates } = this.deps;
    const max = Math.min(req.max, limit);
    const session = req.gates.length > 0 ? gates.open(req.gates, now) : undefined;
    const messages: Message[] = [];
    for (const name of req.queues) {
      const q = queues.get(name);
      if (!q) continue;
      const got = claimer.claim(
        q,
        max - messages.length,
        "peek-lock",
        now,
        undefined,
        session,
        req.leaseCapMs,
      );
      for (const m of got) m.queue = name;
      messages.push(...got);
      if (messages.length >= max) break;
    }
    session?.finish();
    return { messages, retryAt: session?.retryAt() };
  }
}
