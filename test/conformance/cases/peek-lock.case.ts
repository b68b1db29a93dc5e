import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { receiveOne, seqs } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

cases((factory) => {
  describe("§1 peek-lock lifecycle", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000, maxDeliveryCount: 2 });
    });
    afterEach(() => s.close());

    it("1.1 receive locks an active message for lock_duration_ms and returns a lock token", async () => {
      const [seq] = await s.broker.send("q", { body: "hello" });
      const [m] = await s.broker.receive("q");
      assert.ok(m);
      assert.equal(m.seqNumber, seq);
      assert.equal(m.body.toString(), "hello");
      assert.match(m.lockToken ?? "", /^[0-9a-f]{32}$/);
      assert.equal(m.lockedUntil, s.clock.now() + 1000);
      const [peeked] = await s.broker.peek("q");
      assert.equal(peeked?.state, "locked");
      assert.equal(peeked?.lockToken, undefined, "peek never shows the lock token");
    });

    it("1.2 a locked message is not handed to another receive", async () => {
      await s.broker.send("q", { body: "one" });
      const first = await s.broker.receive("q");
      const second = await s.broker.receive("q");
      assert.equal(first.length, 1);
      assert.deepEqual(second, []);
    });

    it("1.3 each claim increments delivery_count", async () => {
      await s.broker.send("q", { body: "x" });
      const [a] = await s.broker.receive("q");
      assert.equal(a?.deliveryCount, 1);
      await s.broker.abandon("q", a!.seqNumber, a!.lockToken!);
      const [b] = await s.broker.receive("q");
      assert.equal(b?.deliveryCount, 2);
    });

    it("1.4 after the lock expires the reaper makes it active again, or dead-letters it at max", async () => {
      await s.broker.send("q", { body: "x" });
      await s.broker.receive("q");
      s.clock.advance(1000);
      await s.maintain();
      const [again] = await s.broker.receive("q");
      assert.equal(again?.deliveryCount, 2);
      s.clock.advance(1000);
      await s.maintain();
      const [dead] = await s.broker.peek("q", { state: "dead_lettered" });
      assert.equal(dead?.deadLetterReason, "MaxDeliveryCountExceeded");
      assert.deepEqual(await s.broker.receive("q"), []);
    });

    it("1.2 competing consumers never see a double delivery", async () => {
      await s.broker.send(
        "q",
        Array.from({ length: 50 }, (_, i) => ({ body: `m${i}` })),
      );
      const batches = await Promise.all(
        Array.from({ length: 20 }, () => s.broker.receive("q", { maxMessages: 5 })),
      );
      const all = batches.flat();
      assert.equal(all.length, 50);
      assert.equal(new Set(seqs(all)).size, 50, "every message handed out once");
      assert.equal(new Set(all.map((m) => m.lockToken)).size, 50, "every claim has its own token");
      assert.deepEqual(await s.broker.receive("q"), []);
    });

    it("1.2 a locked message stays locked until its lock is reclaimed, however late it is", async () => {
      await s.broker.send("q", { body: "x" });
      await receiveOne(s.broker, "q");
      s.clock.advance(999);
      await s.maintain();
      assert.deepEqual(await s.broker.receive("q"), [], "the lease is still live");
      s.clock.advance(5000);
      assert.deepEqual(await s.broker.receive("q"), [], "a lapsed lease is not reclaimed by the claim");
      const [peeked] = await s.broker.peek("q");
      assert.equal(peeked?.state, "locked");
    });

    it("1.3 the first receive is delivery 1, a redelivery after lock expiry is 2", async () => {
      await s.broker.send("q", { body: "x" });
      assert.equal((await receiveOne(s.broker, "q")).deliveryCount, 1);
      s.clock.advance(1000);
      await s.maintain();
      const again = await receiveOne(s.broker, "q");
      assert.equal(again.deliveryCount, 2);
      const [peeked] = await s.broker.peek("q");
      assert.equal(peeked?.deliveryCount, 2);
    });

    it("1.4 the reaper reclaims a lease at its deadline (locked_until <= now), not before", async () => {
      await s.broker.send("q", { body: "x" });
      const m = await receiveOne(s.broker, "q");
      assert.equal(m.lockedUntil, s.clock.now() + 1000);
      s.clock.advance(999);
      await s.maintain();
      assert.equal((await s.broker.peek("q"))[0]?.state, "locked");
      s.clock.advance(1);
      await s.maintain();
      const [peeked] = await s.broker.peek("q");
      assert.equal(peeked?.state, "active");
      assert.equal(peeked?.lockedUntil, undefined, "the reaper clears the lease");
    });

    it("1.5 the only claimable state is active", async () => {
      await s.broker.createQueue("q", { lockDurationMs: 1000, maxDeliveryCount: 1 });
      const [dead, deferred, locked] = await s.broker.send("q", [
        { body: "d" },
        { body: "f" },
        { body: "l" },
      ]);
      await s.broker.schedule("q", { body: "s" }, s.clock.now() + 60_000);
      const got = await s.broker.receive("q", { maxMessages: 3 });
      assert.deepEqual(seqs(got), [dead, deferred, locked]);
      await s.broker.reject("q", dead!, got[0]!.lockToken!);
      await s.broker.defer("q", deferred!, got[1]!.lockToken!);
      assert.deepEqual(await s.broker.receive("q", { maxMessages: 10 }), []);
      const stats = await s.broker.stats("q");
      assert.deepEqual(
        [stats.active, stats.locked, stats.deferred, stats.scheduled, stats.deadLettered],
        [0, 1, 1, 1, 1],
      );
    });

    it("1.5 a claim behind a deep blocked backlog stays fast", async () => {
      await s.broker.createQueue("deep", { orderingMode: "group_fifo" });
      const N = 20_000;
      for (let i = 0; i < N; i += 1000) {
        await s.broker.send(
          "deep",
          Array.from({ length: 1000 }, (_, j) => ({ body: `b${i + j}`, groupId: "blocked" })),
        );
      }
      const head = await receiveOne(s.broker, "deep");
      assert.equal(head.body.toString(), "b0");
      const [free] = await s.broker.send("deep", { body: "free", groupId: "other" });
      const started = performance.now();
      const got = await s.broker.receive("deep", { maxMessages: 10 });
      const first = performance.now() - started;
      assert.deepEqual(seqs(got), [free], "only the other group's message is claimable");
      const again = performance.now();
      assert.deepEqual(await s.broker.receive("deep", { maxMessages: 10 }), []);
      const second = performance.now() - again;
      assert.ok(first < 3000 && second < 3000, `claims took ${first} ms and ${second} ms`);
    });
  });
});
