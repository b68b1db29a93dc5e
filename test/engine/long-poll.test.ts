import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Message } from "../../src/contract/types.js";
import { systemClock } from "../../src/core/clock.js";
import { longPoll } from "../../src/core/long-poll.js";
import type { Claimed } from "../../src/core/verbs/claim.js";
import { Waiters } from "../../src/core/waiters.js";

const message = (seq: number): Message => ({
  seqNumber: seq,
  body: Buffer.from("m"),
  enqueuedAt: 0,
  deliveryCount: 1,
});
const none: Claimed = { messages: [], retryAt: undefined };

/** Waiters whose every commit is announced (as PostgreSQL's are), with nothing external to poll. */
const announced = () => new Waiters<Message>(() => false, 50, true);

/** A worker's long-poll of `keys`: a plain claim of one message, which a sender may hold. */
const plainPoll = (
  waiters: Waiters<Message>,
  keys: string[],
  waitMs: number,
  claim: () => Promise<Claimed>,
  signal?: AbortSignal,
) => longPoll(systemClock, waiters, { keys, waitMs, signal, claim, plain: { max: 1, capMs: 0 } });

describe("long-poll: the claim after parking, and a sender holding a parked receiver", () => {
  it("parks after one claim when no wake-up was announced since it began", async () => {
    const waiters = announced();
    let claims = 0;
    const got = await longPoll(systemClock, waiters, {
      keys: ["q"],
      waitMs: 100,
      signal: undefined,
      claim: async () => {
        claims++;
        return none;
      },
    });
    assert.deepEqual(got, []);
    // The first claim, then the deadline's last look: none in between.
    assert.equal(claims, 2);
  });

  it("claims again at once when a wake-up was announced while its first claim ran", async () => {
    const waiters = announced();
    let claims = 0;
    const started = performance.now();
    const got = await longPoll(systemClock, waiters, {
      keys: ["q"],
      waitMs: 5000,
      signal: undefined,
      claim: async () => {
        claims++;
        // A commit announced while the first claim runs, before the receiver parks: its snapshot
        // did not see the message, so only a second claim can.
        if (claims === 1) {
          waiters.notify("q");
          return none;
        }
        return { messages: [message(7)], retryAt: undefined };
      },
    });
    assert.deepEqual(
      got.map((m) => m.seqNumber),
      [7],
    );
    assert.equal(claims, 2);
    assert.ok(performance.now() - started < 1000, "not left to the deadline");
  });

  it("without every commit announced (another process found by polling), it always claims again", async () => {
    const waiters = new Waiters<Message>(() => false, 50, false);
    let claims = 0;
    await longPoll(systemClock, waiters, {
      keys: ["q"],
      waitMs: 100,
      signal: undefined,
      claim: async () => {
        claims++;
        return none;
      },
    });
    assert.equal(claims, 3);
  });

  it("a held receiver whose deadline passes gets what the sender's statement locked for it", async () => {
    const waiters = announced();
    let claims = 0;
    const polling = longPoll(systemClock, waiters, {
      keys: ["q"],
      waitMs: 60,
      signal: undefined,
      claim: async () => {
        claims++;
        return none;
      },
      plain: { max: 5, capMs: 0 },
    });
    await sleep(20);
    const held = waiters.hold("q");
    assert.deepEqual(held?.claim, { max: 5, capMs: 0 });
    // Nobody else reaches it while it is held.
    assert.equal(waiters.hold("q"), undefined);
    waiters.notify("q");
    await sleep(100);
    held!.release([message(3)]);
    assert.deepEqual(
      (await polling).map((m) => m.seqNumber),
      [3],
    );
    assert.equal(claims, 1);
  });

  it("a held receiver released with nothing claims for itself; past its deadline, one last look", async () => {
    const waiters = announced();
    let claims = 0;
    const claim = async () => {
      claims++;
      return claims === 2 ? { messages: [message(9)], retryAt: undefined } : none;
    };
    const early = plainPoll(waiters, ["q"], 5000, claim);
    await sleep(20);
    waiters.hold("q")!.release(undefined);
    assert.deepEqual(
      (await early).map((m) => m.seqNumber),
      [9],
    );

    claims = 10;
    const late = plainPoll(waiters, ["q"], 40, claim);
    await sleep(20);
    const held = waiters.hold("q")!;
    await sleep(60);
    held.release(undefined);
    assert.deepEqual(await late, []);
    assert.equal(claims, 12);
  });

  it("back from a hand-off, the next plain long-poll of the queue parks without a claim until a wake-up", async () => {
    const waiters = announced();
    let claims = 0;
    const claim = async () => {
      claims++;
      return none;
    };
    const seqsOf = async (poll: Promise<Message[]>) => (await poll).map((m) => m.seqNumber);
    const first = plainPoll(waiters, ["q"], 5000, claim);
    await sleep(20);
    waiters.hold("q")!.release([message(1)]);
    assert.deepEqual(await seqsOf(first), [1]);
    assert.equal(claims, 1);
    assert.equal(waiters.isDrained("q"), true);
    assert.equal(waiters.isDrained("other"), false);

    const second = plainPoll(waiters, ["q"], 5000, claim);
    await sleep(20);
    assert.equal(claims, 1, "parked without a claim");
    waiters.hold("q")!.release([message(2)]);
    assert.deepEqual(await seqsOf(second), [2]);

    // A wake-up of any queue ends it: the next long-poll claims before it parks.
    waiters.notify("other");
    assert.equal(waiters.isDrained("q"), false);
    assert.deepEqual(await plainPoll(waiters, ["q"], 30, claim), []);
    assert.equal(claims, 3, "its claim, then the deadline's last look");

    // A receiver released with nothing, or handed messages while a wake-up came: nothing noted.
    const third = plainPoll(waiters, ["q"], 5000, claim);
    await sleep(20);
    const held = waiters.hold("q")!;
    waiters.notify("q");
    held.release([message(5)]);
    assert.deepEqual(await seqsOf(third), [5]);
    assert.equal(waiters.isDrained("q"), false);

    // Without every commit announced (another process found by polling), never.
    const polled = new Waiters<Message>(() => false, 50, false);
    const elsewhere = plainPoll(polled, ["q"], 5000, claim);
    await sleep(20);
    polled.hold("q")!.release([message(4)]);
    assert.deepEqual(await seqsOf(elsewhere), [4]);
    assert.equal(polled.isDrained("q"), false);
  });

  it("an aborted, a multi-queue or a non-plain receiver is never held", async () => {
    const waiters = announced();
    const abort = new AbortController();
    const claim = async () => none;
    const aborted = plainPoll(waiters, ["a"], 100, claim, abort.signal);
    const many = plainPoll(waiters, ["b", "c"], 100, claim);
    const notPlain = longPoll(systemClock, waiters, { keys: ["d"], waitMs: 100, signal: undefined, claim });
    await sleep(20);
    abort.abort();
    for (const k of ["a", "b", "c", "d"]) assert.equal(waiters.hold(k), undefined, k);
    assert.deepEqual(await Promise.all([aborted, many, notPlain]), [[], [], []]);
  });
});
