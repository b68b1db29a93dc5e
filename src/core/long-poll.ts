import type { Message } from "../contract/types.js";
import type { Clock } from "./clock.js";
import type { Claimed } from "./verbs/claim.js";
import { waitAny } from "./wait-any.js";
import type { PlainClaim, Take, Waiters } from "./waiters.js";

const NOTHING: Claimed = { messages: [], retryAt: undefined };

/** One long-poll: claims on `keys`, waiting up to `waitMs` for something to claim. */
export interface LongPoll {
  keys: readonly string[];
  waitMs: number;
  signal: AbortSignal | undefined;
  /** One claim, in a transaction of its own. */
  claim(): Promise<Claimed>;
  /**
   * The same claim inside a sender's transaction, for a dialect that hands messages to parked
   * receivers as it makes them claimable (no transaction of the receiver's own then).
   */
  take?: Take<Message>;
  /**
   * What the claim is when it is a plain peek-lock batch of one queue: a send may then store its
   * messages already locked for this receiver, in the sender's own statement (`Waiters.hold`).
   */
  plain?: PlainClaim;
}

/**
 * The long-poll of `receive` and `receiveAny`: claims; when that finds nothing, parks on the keys
 * (woken by the dialect's `waiters` when a write, local or not, made messages claimable there) and
 * claims again (unless nothing was announced meanwhile, see `Waiters.epoch`), until something is
 * claimed, the time runs out or the signal aborts. A claim that
 * gates cut short is looked at again when a held-back subject may be claimable.
 */
export async function longPoll(clock: Clock, waiters: Waiters<Message>, p: LongPoll): Promise<Message[]> {
  const { signal, take } = p;
  const deadline = clock.now() + p.waitMs;
  // The first claim runs before parking: a receiver that finds messages never parks. A plain one on
  // a queue known drained parks at once (an idle worker back from a job handed to it): the claim
  // would find nothing, and a send that starts meanwhile would find no one to hand its job to.
  let epoch = waiters.epoch;
  const key = p.plain && p.keys.length === 1 ? p.keys[0] : undefined;
  let got = key !== undefined && waiters.isDrained(key) ? NOTHING : await p.claim();
  for (;;) {
    if (got.messages.length > 0) return got.messages;
    const now = clock.now();
    if (now >= deadline || signal?.aborted) return [];
    // Parked before the next claim: a commit while it runs cannot be missed, and a woken receiver
    // needs one claim per wake-up, not two. Once that claim found nothing, a sender's transaction
    // may claim for it (a hand-off); armed only then, so the two never both claim (`max` holds).
    let armed = false;
    const handOff: Take<Message> | undefined =
      take && ((ctx, at, limit) => (armed && !signal?.aborted ? take(ctx, at, limit) : []));
    const plain = p.plain && (() => (armed && !signal?.aborted ? p.plain : undefined));
    const waiter = waitAny(waiters, p.keys, deadline, now, signal, handOff, plain);
    // A close while the claim runs rejects the waiter before anyone awaits it.
    waiter.woken.catch(() => {});
    // No wake-up announced since the last claim began: nothing it missed, so no claim again (when
    // every commit is announced; a wake-up that comes now finds the waiter parked).
    if (!(waiters.announcesAll && waiters.epoch === epoch)) {
      epoch = waiters.epoch;
      try {
        got = await p.claim();
      } catch (err) {
        waiter.cancel();
        throw err;
      }
      if (got.messages.length > 0) {
        waiter.cancel();
        return got.messages;
      }
    }
    armed = true;
    let woken: boolean;
    if (got.retryAt !== undefined && got.retryAt < deadline) {
      // A gate holds messages back: look again when one may be claimable.
      let rechecking = false;
      const recheck = setTimeout(
        () => {
          rechecking = true;
          // Not a wake-up: the next turn claims whatever the epoch says.
          epoch = -1;
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
    if (taken) {
      // Parked at `epoch` after finding nothing; unless a wake-up came since, the send left nothing.
      if (key !== undefined) waiters.noteDrained(key, epoch);
      return taken;
    }
    // Not woken: the wait ran its time (measured in real time: an injected clock need not move),
    // or was aborted. One last look at the deadline (a wake-up may have raced it).
    if (!woken || signal?.aborted || clock.now() >= deadline) {
      return signal?.aborted ? [] : (await p.claim()).messages;
    }
  }
}
