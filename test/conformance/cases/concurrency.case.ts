import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { ClosedError, LockLostError } from "../../../src/contract/errors.js";
import { deadLetter, fails, receiveOne, seqs, settle } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

/** A long-poll that would outlast the test: if the wake-up is lost, the test times out. */
const LONG = 20_000;
const QUICK = { timeout: 5000 };

cases((factory) => {
  describe("§14 concurrency", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000, maxDeliveryCount: 100 });
    });
    afterEach(() => s.close());

    it("14.1 exclusive delivery while the lease is live, under concurrent receivers", async () => {
      await s.broker.send(
        "q",
        Array.from({ length: 40 }, (_, i) => ({
          body: `m${i}`,
          groupId: i % 4 === 0 ? `g${i % 8}` : undefined,
        })),
      );
      const seen = new Set<number>();
      for (let round = 0; round < 5; round++) {
        const batches = await Promise.all(
          Array.from({ length: 10 }, () => s.broker.receive("q", { maxMessages: 3 })),
        );
        for (const m of batches.flat()) {
          assert.ok(!seen.has(m.seqNumber), `seq ${m.seqNumber} delivered twice`);
          seen.add(m.seqNumber);
        }
        s.clock.advance(999);
      }
      const locked = (await s.broker.stats("q")).locked;
      assert.equal(locked, seen.size);
    });

    it("14.2 after a reassignment the old holder's settle is lock_lost and the new holder's succeeds", async () => {
      await s.broker.send("q", { body: "x" });
      const old = await receiveOne(s.broker, "q");
      s.clock.advance(1000);
      await s.maintain();
      const holder = await receiveOne(s.broker, "q");
      assert.equal(holder.seqNumber, old.seqNumber);
      await fails(s.broker.complete("q", old.seqNumber, old.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.abandon("q", old.seqNumber, old.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.reject("q", old.seqNumber, old.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.defer("q", old.seqNumber, old.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.renew("q", old.seqNumber, old.lockToken), LockLostError, "lock_lost");
      assert.deepEqual(
        await s.broker.completeBatch("q", [{ seqNumber: old.seqNumber, lockToken: old.lockToken }]),
        [{ seqNumber: old.seqNumber, ok: false }],
      );
      await s.broker.complete("q", holder.seqNumber, holder.lockToken);
      assert.equal((await s.broker.stats("q")).total, 0);
    });

    it("14.2 concurrent settlements of one lease: exactly one effect wins", async () => {
      await s.broker.send("q", { body: "x" });
      const m = await receiveOne(s.broker, "q");
      const results = await Promise.allSettled([
        s.broker.complete("q", m.seqNumber, m.lockToken),
        s.broker.abandon("q", m.seqNumber, m.lockToken),
        s.broker.defer("q", m.seqNumber, m.lockToken),
        s.broker.reject("q", m.seqNumber, m.lockToken),
      ]);
      const won = results.filter((r) => r.status === "fulfilled");
      assert.equal(won.length, 1);
      for (const r of results) {
        if (r.status === "rejected") assert.ok(r.reason instanceof LockLostError);
      }
    });

    it("14.3 a completed message is never redelivered", async () => {
      await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      const got = await s.broker.receive("q", { maxMessages: 2 });
      await s.broker.complete("q", got[0]!.seqNumber, got[0]!.lockToken!);
      for (let i = 0; i < 3; i++) {
        s.clock.advance(1000);
        await s.maintain();
        const again = await s.broker.receive("q", { maxMessages: 10 });
        assert.deepEqual(seqs(again), [got[1]!.seqNumber]);
      }
    });

    it("14.4 every sent message is eventually completed, through lease expiries and abandons", async () => {
      const sent = await s.broker.send(
        "q",
        Array.from({ length: 200 }, (_, i) => ({
          body: `m${i}`,
          groupId: i % 3 === 0 ? `g${i % 5}` : undefined,
        })),
      );
      const done = new Set<number>();
      let step = 0;
      while (done.size < sent.length) {
        assert.ok(step++ < 200, "no progress");
        const batches = await Promise.all(
          Array.from({ length: 4 }, () => s.broker.receive("q", { maxMessages: 8 })),
        );
        for (const [i, m] of batches.flat().entries()) {
          const fate = (m.seqNumber + i + step) % 4;
          if (fate === 0) continue; // a consumer that died: its lease lapses
          if (fate === 1) await s.broker.abandon("q", m.seqNumber, m.lockToken!);
          else {
            await s.broker.complete("q", m.seqNumber, m.lockToken!);
            assert.ok(!done.has(m.seqNumber), "completed twice");
            done.add(m.seqNumber);
          }
        }
        s.clock.advance(1000);
        await s.maintain();
      }
      assert.deepEqual(
        [...done].sort((a, b) => a - b),
        sent,
      );
      assert.equal((await s.broker.stats("q")).total, 0);
    });
  });

  describe("§14 long-poll wake-ups", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000 });
    });
    afterEach(() => s.close());

    it("1.9 a parked receive is woken by a send", QUICK, async () => {
      const parked = s.broker.receive("q", { waitMs: LONG });
      await settle();
      const [seq] = await s.broker.send("q", { body: "x" });
      assert.deepEqual(seqs(await parked), [seq]);
    });

    it("1.9 a parked receive is woken by an abandon", QUICK, async () => {
      await s.broker.send("q", { body: "x" });
      const m = await receiveOne(s.broker, "q");
      const parked = s.broker.receive("q", { waitMs: LONG });
      await settle();
      await s.broker.abandon("q", m.seqNumber, m.lockToken);
      assert.deepEqual(seqs(await parked), [m.seqNumber]);
    });

    it("1.9 a parked receive is woken by the scheduler and by the reaper", QUICK, async () => {
      const [sched] = await s.broker.schedule("q", { body: "later" }, s.clock.now() + 1000);
      const first = s.broker.receive("q", { waitMs: LONG });
      await settle();
      s.clock.advance(1000);
      await s.maintain();
      const [got] = await first;
      assert.equal(got?.seqNumber, sched);
      const second = s.broker.receive("q", { waitMs: LONG });
      await settle();
      s.clock.advance(1000);
      await s.maintain();
      assert.deepEqual(seqs(await second), [sched]);
    });

    it("1.9 a parked receive is woken by a redrive into its queue", QUICK, async () => {
      await s.broker.createQueue("source");
      await deadLetter(s.broker, "source", 1);
      const parked = s.broker.receive("q", { waitMs: LONG });
      await settle();
      assert.equal(await s.broker.redrive("source", { target: "q" }), 1);
      assert.equal((await parked).length, 1);
    });

    it("1.9 a parked receive on a backing queue is woken by a publish to its topic", QUICK, async () => {
      await s.broker.subscribe("t", "sub");
      const parked = s.broker.receive("sub", { waitMs: LONG });
      await settle();
      await s.broker.send("t", { body: "x" });
      assert.deepEqual(
        (await parked).map((m) => m.body.toString()),
        ["x"],
      );
    });

    it(
      "1.9 a parked receive is woken when the head of a group is completed, alone or in a batch",
      QUICK,
      async () => {
        const [a1, a2, a3] = await s.broker.send("q", [
          { body: "a1", groupId: "a" },
          { body: "a2", groupId: "a" },
          { body: "a3", groupId: "a" },
        ]);
        const head = await receiveOne(s.broker, "q");
        assert.equal(head.seqNumber, a1);
        const parked = s.broker.receive("q", { waitMs: LONG });
        await settle();
        await s.broker.complete("q", head.seqNumber, head.lockToken);
        const [next] = await parked;
        assert.equal(next?.seqNumber, a2);
        const third = s.broker.receive("q", { waitMs: LONG });
        await settle();
        await s.broker.completeBatch("q", [{ seqNumber: next!.seqNumber, lockToken: next!.lockToken! }]);
        assert.deepEqual(seqs(await third), [a3]);
      },
    );

    it("1.9 a parked receive is woken when the head of a group is dead-lettered", QUICK, async () => {
      await s.broker.createQueue("once", { lockDurationMs: 1000, maxDeliveryCount: 1 });
      for (const queue of ["q", "once"]) {
        const [, b2] = await s.broker.send(queue, [
          { body: "b1", groupId: "b" },
          { body: "b2", groupId: "b" },
        ]);
        const head = await receiveOne(s.broker, queue);
        const parked = s.broker.receive(queue, { waitMs: LONG });
        await settle();
        // Rejected; on a queue of one delivery, abandoned at its delivery limit.
        if (queue === "q") await s.broker.reject(queue, head.seqNumber, head.lockToken);
        else await s.broker.abandon(queue, head.seqNumber, head.lockToken);
        assert.deepEqual(seqs(await parked), [b2], queue);
      }
    });

    it("1.9 a parked receive is woken when the reaper dead-letters a group's head", QUICK, async () => {
      await s.broker.createQueue("once", { lockDurationMs: 1000, maxDeliveryCount: 1 });
      const [, c2] = await s.broker.send("once", [
        { body: "c1", groupId: "c" },
        { body: "c2", groupId: "c" },
      ]);
      await receiveOne(s.broker, "once");
      const parked = s.broker.receive("once", { waitMs: LONG });
      await settle();
      // Its lease lapses at its delivery limit: the reaper dead-letters it.
      s.clock.advance(1000);
      await s.maintain();
      assert.deepEqual(seqs(await parked), [c2]);
    });

    it("1.9 a parked receive is woken when a locked group head expires", QUICK, async () => {
      await s.broker.createQueue("ttl", { lockDurationMs: 60_000 });
      await s.broker.send("ttl", { body: "t1", groupId: "t" }, { ttlMs: 1000 });
      const [t2] = await s.broker.send("ttl", { body: "t2", groupId: "t" });
      await receiveOne(s.broker, "ttl");
      const parked = s.broker.receive("ttl", { waitMs: LONG });
      await settle();
      // Its time to live passes while it is locked: the TTL pass dead-letters it.
      s.clock.advance(1000);
      await s.maintain();
      assert.deepEqual(seqs(await parked), [t2]);
      assert.equal(
        (await s.broker.peek("ttl", { state: "dead_lettered" }))[0]?.deadLetterReason,
        "TTLExpired",
      );
    });

    it(
      "1.9 a parked receive is woken when a group's deferred head is cancelled or removed",
      QUICK,
      async () => {
        await s.broker.createQueue("held", { lockDurationMs: 60_000 });
        for (const drop of ["cancel", "remove"] as const) {
          const [, next] = await s.broker.send("held", [
            { body: "h1", groupId: drop },
            { body: "h2", groupId: drop },
          ]);
          const head = await receiveOne(s.broker, "held");
          // Deferred, it holds its group's line: nothing is claimable.
          await s.broker.defer("held", head.seqNumber, head.lockToken);
          const parked = s.broker.receive("held", { waitMs: LONG });
          await settle();
          if (drop === "cancel")
            assert.equal(await s.broker.cancelMessage("held", head.seqNumber), "cancelled");
          else assert.equal(await s.broker.removeMessages("held", [head.seqNumber]), 1);
          const [got] = await parked;
          assert.equal(got?.seqNumber, next, drop);
          await s.broker.complete("held", got!.seqNumber, got!.lockToken!);
        }
      },
    );

    it("1.9 a parked receive on a strict_fifo queue is woken when the head is completed", QUICK, async () => {
      await s.broker.createQueue("strict", { lockDurationMs: 1000, orderingMode: "strict_fifo" });
      const [, second] = await s.broker.send("strict", [{ body: "s1" }, { body: "s2" }]);
      const head = await receiveOne(s.broker, "strict");
      const parked = s.broker.receive("strict", { waitMs: LONG });
      await settle();
      await s.broker.complete("strict", head.seqNumber, head.lockToken);
      assert.deepEqual(seqs(await parked), [second]);
    });

    it("1.9 one message wakes one of two parked receivers; the other times out empty", QUICK, async () => {
      const a = s.broker.receive("q", { waitMs: 300 });
      const b = s.broker.receive("q", { waitMs: 300 });
      await settle();
      await s.broker.send("q", { body: "x" });
      const [ra, rb] = await Promise.all([a, b]);
      assert.equal(ra.length + rb.length, 1);
    });

    it("1.9 a long-poll with nothing to claim returns an empty batch at its deadline", QUICK, async () => {
      const started = performance.now();
      assert.deepEqual(await s.broker.receive("q", { waitMs: 50 }), []);
      assert.ok(performance.now() - started >= 40);
    });

    it("14.5 close wakes parked long-polls with closed", QUICK, async () => {
      await s.broker.createQueue("other");
      const parked = [s.broker.receive("q", { waitMs: LONG }), s.broker.receive("other", { waitMs: LONG })];
      await settle();
      const woken = Promise.all(parked.map((p) => fails(p, ClosedError, "closed")));
      await s.close();
      await woken;
    });

    it("14.5 close waits for work in flight, then refuses new work", QUICK, async () => {
      const inFlight = s.broker.send("q", { body: "x" });
      const closing = s.close();
      const [seq] = await inFlight;
      assert.ok(seq! > 0, "admitted work completes");
      await closing;
      await fails(s.broker.send("q", { body: "y" }), ClosedError, "closed");
      await fails(s.broker.receive("q"), ClosedError, "closed");
      await fails(s.broker.stats("q"), ClosedError, "closed");
      await fails(s.broker.peek("q"), ClosedError, "closed");
    });
  });

  describe("§14 close and durability", () => {
    it("14.5 work admitted before close is committed", async () => {
      const s = await factory({ durable: true });
      try {
        await s.broker.createQueue("q");
        const sends = Array.from({ length: 20 }, (_, i) => s.broker.send("q", { body: `m${i}` }));
        await s.restart!();
        // Concurrent sends commit in an order the contract does not fix (a multi-connection engine,
        // or a remote client, may commit them in any order): every one of them is stored.
        const sent = (await Promise.all(sends)).flat().sort((a, b) => a - b);
        assert.deepEqual(seqs(await s.broker.peek("q", { max: 100 })), sent);
      } finally {
        await s.close();
      }
    });
  });
});
