import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { InvalidArgumentError, LockLostError, NotFoundError } from "../../../src/contract/errors.js";
import type { MessageState } from "../../../src/contract/types.js";
import { fails, receiveOne, seqs, snapshot } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

cases((factory) => {
  describe("§7 scheduling, deferral & TTL", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 60_000 });
      await s.broker.createQueue("drop", { lockDurationMs: 60_000, deadLetterOnExpire: false });
    });
    afterEach(() => s.close());

    it("7.1 a scheduled message stays hidden until its time, then the scheduler activates it", async () => {
      const at = s.clock.now() + 5000;
      const [seq] = await s.broker.schedule("q", { body: "later" }, at);
      const [peeked] = await s.broker.peek("q");
      assert.equal(peeked?.state, "scheduled");
      assert.equal(peeked?.visibleAt, at);
      assert.equal(peeked?.enqueuedAt, s.clock.now());
      s.clock.advance(4999);
      await s.maintain();
      assert.deepEqual(await s.broker.receive("q"), []);
      s.clock.advance(1);
      await s.maintain();
      assert.equal((await s.broker.peek("q"))[0]?.state, "active");
      assert.deepEqual(seqs(await s.broker.receive("q")), [seq]);
    });

    it("7.1 send with scheduledAt is a schedule; schedule at 0 is an immediate send", async () => {
      await s.broker.send("q", { body: "a" }, { scheduledAt: s.clock.now() + 1000 });
      await s.broker.schedule("q", { body: "b" }, 0);
      const stats = await s.broker.stats("q");
      assert.deepEqual([stats.scheduled, stats.active], [1, 1]);
    });

    it("7.1 a schedule time at or before now is invalid_argument and stores nothing", async () => {
      await s.broker.send("q", { body: "x" });
      const before = await snapshot(s.broker, "q");
      const now = s.clock.now();
      await fails(s.broker.schedule("q", { body: "a" }, now), InvalidArgumentError, "invalid_argument");
      await fails(s.broker.schedule("q", { body: "a" }, now - 1), InvalidArgumentError, "invalid_argument");
      await fails(s.broker.schedule("q", { body: "a" }, -5), InvalidArgumentError, "invalid_argument");
      await fails(
        s.broker.send("q", [{ body: "a" }, { body: "b" }], { scheduledAt: now }),
        InvalidArgumentError,
        "invalid_argument",
      );
      assert.deepEqual(await snapshot(s.broker, "q"), before);
    });

    it("7.1 cancel deletes a never-delivered scheduled message", async () => {
      const [seq, keep] = await s.broker.schedule("q", [{ body: "a" }, { body: "b" }], s.clock.now() + 1000);
      await s.broker.cancel("q", seq!);
      assert.deepEqual(seqs(await s.broker.peek("q")), [keep]);
      await fails(s.broker.cancel("q", seq!), NotFoundError, "not_found");
    });

    it("7.1 cancelling a backoff-parked redelivery is not_found", async () => {
      const [seq] = await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.abandon("q", seq!, m.lockToken, { delayMs: 5000 });
      assert.equal((await s.broker.peek("q"))[0]?.state, "scheduled");
      await fails(s.broker.cancel("q", seq!), NotFoundError, "not_found");
      assert.equal((await s.broker.stats("q")).scheduled, 1);
    });

    it("7.1 cancel of an active message, an unknown seq, or on another or unknown queue is not_found", async () => {
      await s.broker.createQueue("other");
      const [active] = await s.broker.send("q", { body: "a" });
      const [sched] = await s.broker.schedule("q", { body: "b" }, s.clock.now() + 1000);
      const before = await snapshot(s.broker, "q");
      await fails(s.broker.cancel("q", active!), NotFoundError, "not_found");
      await fails(s.broker.cancel("q", 999_999), NotFoundError, "not_found");
      await fails(s.broker.cancel("other", sched!), NotFoundError, "not_found");
      await fails(s.broker.cancel("nope", sched!), NotFoundError, "not_found");
      assert.deepEqual(await snapshot(s.broker, "q"), before);
    });

    for (const [queue, dlq] of [
      ["q", true],
      ["drop", false],
    ] as const) {
      for (const state of ["active", "locked", "deferred", "scheduled"] as MessageState[]) {
        it(`7.2 TTL expiry of a ${state} message ${dlq ? "dead-letters it (TTLExpired)" : "deletes it"}`, async () => {
          const [seq] = await s.broker.send(queue, { body: "x" }, { ttlMs: 10_000 });
          const [other] = await s.broker.send(queue, { body: "keeps" });
          let token: string | undefined;
          if (state !== "active") {
            const m = await receiveOne(s.broker, queue);
            token = m.lockToken;
            if (state === "deferred") await s.broker.defer(queue, seq!, m.lockToken);
            if (state === "scheduled") await s.broker.abandon(queue, seq!, m.lockToken, { delayMs: 60_000 });
          }
          assert.equal((await s.broker.peek(queue))[0]?.state, state);
          s.clock.advance(9999);
          await s.maintain();
          assert.equal((await s.broker.peek(queue))[0]?.state, state, "not before its time");
          s.clock.advance(1);
          await s.maintain();
          const left = await s.broker.peek(queue);
          if (dlq) {
            assert.deepEqual(
              left.map((m) => [m.seqNumber, m.state, m.deadLetterReason]),
              [
                [seq, "dead_lettered", "TTLExpired"],
                [other, "active", undefined],
              ],
            );
            assert.equal(left[0]?.lockedUntil, undefined, "the lock is cleared");
          } else {
            assert.deepEqual(seqs(left), [other]);
          }
          if (state === "locked") {
            await fails(s.broker.complete(queue, seq!, token!), LockLostError, "lock_lost");
          }
        });
      }
    }

    it("7.2 the claim skips an expired message before the sweep runs", async () => {
      const [expiring, fresh] = await s.broker.send("q", [{ body: "x" }, { body: "y" }], { ttlMs: 1000 });
      await s.broker.send("q", { body: "z" });
      s.clock.advance(1000);
      const got = await s.broker.receive("q", { maxMessages: 10 });
      assert.deepEqual(
        got.map((m) => m.body.toString()),
        ["z"],
      );
      const stale = await s.broker.peek("q", { state: "active" });
      assert.deepEqual(seqs(stale), [expiring, fresh], "still active until the sweep");
      await s.maintain();
      assert.equal((await s.broker.stats("q")).deadLettered, 2);
    });

    it("7.2 TTL is anchored at the delivery time of a scheduled message", async () => {
      const at = s.clock.now() + 10_000;
      const [seq] = await s.broker.schedule("q", { body: "x" }, at, { ttlMs: 1000 });
      assert.equal((await s.broker.peek("q"))[0]?.expiresAt, at + 1000);
      s.clock.advance(10_500);
      await s.maintain();
      assert.deepEqual(seqs(await s.broker.receive("q")), [seq]);
    });

    it("7.2 default_ttl_ms applies to messages without a TTL and caps a longer one", async () => {
      await s.broker.createQueue("capped", { defaultTtlMs: 5000 });
      const now = s.clock.now();
      await s.broker.send("capped", { body: "none" });
      await s.broker.send("capped", { body: "longer" }, { ttlMs: 60_000 });
      await s.broker.send("capped", { body: "shorter" }, { ttlMs: 1000 });
      assert.deepEqual(
        (await s.broker.peek("capped")).map((m) => m.expiresAt),
        [now + 5000, now + 5000, now + 1000],
      );
    });

    it("7.2 without a TTL a message never expires", async () => {
      await s.broker.send("q", { body: "x" });
      assert.equal((await s.broker.peek("q"))[0]?.expiresAt, undefined);
      s.clock.advance(365 * 24 * 3600 * 1000);
      await s.maintain();
      assert.equal((await s.broker.peek("q"))[0]?.state, "active");
    });

    it("7.2 ttlMs applies to every message of the request", async () => {
      const now = s.clock.now();
      await s.broker.send("q", [{ body: "a" }, { body: "b" }], { ttlMs: 2000 });
      assert.deepEqual(
        (await s.broker.peek("q")).map((m) => m.expiresAt),
        [now + 2000, now + 2000],
      );
    });
  });
});
