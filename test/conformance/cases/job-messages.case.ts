import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { LockLostError } from "../../../src/contract/errors.js";
import { fails, receiveOne, seqs } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

// The generic message features the job face is built on (JobService and the extended fields).
cases((factory) => {
  describe("§J1 per-message limit, lease and delay", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000, maxDeliveryCount: 5 });
    });
    afterEach(() => s.close());

    it("J1.1 a message's own lease and delivery limit override the queue's", async () => {
      await s.broker.send("q", { body: "x", lockDurationMs: 5000, maxDeliveryCount: 2 });
      const m = await receiveOne(s.broker, "q");
      assert.equal(m.lockedUntil, s.clock.now() + 5000);
      assert.equal(m.lockDurationMs, 5000);
      assert.equal(m.maxDeliveryCount, 2);
      await s.broker.abandon("q", m.seqNumber, m.lockToken);
      const again = await receiveOne(s.broker, "q");
      await s.broker.abandon("q", again.seqNumber, again.lockToken);
      const [dead] = await s.broker.peek("q", { state: "dead_lettered" });
      assert.equal(dead?.seqNumber, m.seqNumber, "dead at its own limit of 2, not the queue's 5");
    });

    it("J1.2 renew extends by the message's own lease; the reaper honours its limit", async () => {
      await s.broker.send("q", { body: "x", lockDurationMs: 3000, maxDeliveryCount: 1 });
      const m = await receiveOne(s.broker, "q");
      s.clock.advance(2000);
      const [r] = await s.broker.renewBatch("q", [{ seqNumber: m.seqNumber, lockToken: m.lockToken }]);
      assert.equal(r?.lockedUntil, s.clock.now() + 3000);
      s.clock.advance(3000);
      await s.maintain();
      const [dead] = await s.broker.peek("q", { state: "dead_lettered" });
      assert.equal(dead?.deadLetterReason, "MaxDeliveryCountExceeded");
    });

    it("J1.3 delayMs schedules a message relative to the send", async () => {
      await s.broker.send("q", [{ body: "now" }, { body: "later", delayMs: 500 }]);
      const [later] = await s.broker.peek("q", { state: "scheduled" });
      assert.equal(later?.visibleAt, s.clock.now() + 500);
      s.clock.advance(500);
      await s.maintain();
      assert.equal((await s.broker.receive("q", { maxMessages: 5 })).length, 2);
    });

    it("J1.4 a unique key answers with the live message until it settles", async () => {
      const [a] = await s.broker.send("q", { body: "1", uniqueKey: "k" });
      const [b] = await s.broker.send("q", { body: "2", uniqueKey: "k" });
      assert.equal(b, a);
      const [other] = await s.broker.send("q", { body: "3", uniqueKey: "other" });
      assert.notEqual(other, a);
      const m = (await s.broker.receive("q")).find((x) => x.seqNumber === a)!;
      const [c] = await s.broker.send("q", { body: "4", uniqueKey: "k" });
      assert.equal(c, a, "a locked message still holds its key");
      await s.broker.complete("q", a!, m.lockToken!);
      const [d] = await s.broker.send("q", { body: "5", uniqueKey: "k" });
      assert.notEqual(d, a, "settled: the key is free");
      const [rec] = await s.broker.getMessages([d!]);
      assert.equal(rec?.uniqueKey, "k");
    });
  });

  describe("§J2 kept outcomes, errors, progress and cancellation", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000, maxDeliveryCount: 3 });
    });
    afterEach(() => s.close());

    it("J2.1 complete with retainMs keeps the message completed with its result until the sweep", async () => {
      const [seq] = await s.broker.send("q", { body: "x", subject: "task" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.complete("q", seq!, m.lockToken, { retainMs: 1000, result: Buffer.from("42") });
      const [rec] = await s.broker.getMessages([seq!]);
      assert.equal(rec?.state, "completed");
      assert.equal(rec?.queue, "q");
      assert.equal(rec?.result?.toString(), "42");
      assert.equal(rec?.settledAt, s.clock.now());
      assert.equal(rec?.deliveredAt, s.clock.now());
      const stats = await s.broker.stats("q");
      assert.equal(stats.completed, 1);
      assert.deepEqual(await s.broker.receive("q"), []);
      s.clock.advance(999);
      await s.maintain();
      assert.equal((await s.broker.getMessages([seq!])).length, 1);
      s.clock.advance(1);
      await s.maintain();
      assert.deepEqual(await s.broker.getMessages([seq!]), []);
    });

    it("J2.2 completeBatch keeps each item's result", async () => {
      await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      const [a, b] = await s.broker.receive("q", { maxMessages: 2 });
      const res = await s.broker.completeBatch("q", [
        { seqNumber: a!.seqNumber, lockToken: a!.lockToken!, retainMs: 60_000, result: Buffer.from("A") },
        { seqNumber: b!.seqNumber, lockToken: b!.lockToken! },
      ]);
      assert.deepEqual(
        res.map((r) => r.ok),
        [true, true],
      );
      const recs = await s.broker.getMessages([a!.seqNumber, b!.seqNumber]);
      assert.deepEqual(
        recs.map((r) => [r.seqNumber, r.result?.toString()]),
        [[a!.seqNumber, "A"]],
      );
    });

    it("J2.3 abandon and reject record each delivery's error; a replay records nothing twice", async () => {
      const [seq] = await s.broker.send("q", { body: "x" });
      const m1 = await receiveOne(s.broker, "q");
      await s.broker.abandon("q", seq!, m1.lockToken, { error: "first", delayMs: 100 });
      await s.broker.abandon("q", seq!, m1.lockToken, { error: "first", delayMs: 100 });
      const [backingOff] = await s.broker.getMessages([seq!]);
      assert.equal(backingOff?.state, "scheduled");
      assert.equal(backingOff?.lastError, "first");
      assert.equal((await s.broker.stats("q")).backingOff, 1);
      s.clock.advance(100);
      await s.maintain();
      const m2 = await receiveOne(s.broker, "q");
      await s.broker.reject("q", seq!, m2.lockToken, {
        reason: "NotRetryable",
        description: "d",
        error: "second",
      });
      const errors = await s.broker.messageErrors(seq!);
      assert.deepEqual(
        errors.map((e) => [e.attempt, e.error]),
        [
          [1, "first"],
          [2, "second"],
        ],
      );
      const [dead] = await s.broker.getMessages([seq!]);
      assert.equal(dead?.state, "dead_lettered");
      assert.equal(dead?.settledAt, s.clock.now());
    });

    it("J2.4 abandon with countDelivery false gives the delivery back", async () => {
      await s.broker.createQueue("one", { lockDurationMs: 1000, maxDeliveryCount: 1 });
      const [seq] = await s.broker.send("one", { body: "x" });
      const m = await receiveOne(s.broker, "one");
      await s.broker.abandon("one", seq!, m.lockToken, { countDelivery: false, delayMs: 50 });
      const [rec] = await s.broker.getMessages([seq!]);
      assert.equal(rec?.state, "scheduled");
      assert.equal(rec?.deliveryCount, 0);
      s.clock.advance(50);
      await s.maintain();
      assert.equal((await receiveOne(s.broker, "one")).deliveryCount, 1);
    });

    it("J2.5 cancelMessage cancels a waiting message, and flags a locked one for its holder", async () => {
      const [waiting, held] = await s.broker.send("q", [{ body: "w", delayMs: 10_000 }, { body: "h" }]);
      assert.equal(await s.broker.cancelMessage("q", waiting!, { retainMs: 500 }), "cancelled");
      assert.equal(await s.broker.cancelMessage("q", waiting!), "none");
      assert.equal((await s.broker.stats("q")).cancelled, 1);
      const m = await receiveOne(s.broker, "q");
      assert.equal(m.seqNumber, held);
      assert.equal(await s.broker.cancelMessage("q", held!), "requested");
      const [r] = await s.broker.renewBatch("q", [{ seqNumber: held!, lockToken: m.lockToken }]);
      assert.equal(r?.cancelRequested, true);
      await fails(s.broker.cancelMessage("q", held!, { lockToken: "wrong" }), LockLostError, "lock_lost");
      assert.equal(
        await s.broker.cancelMessage("q", held!, { lockToken: m.lockToken, retainMs: 500 }),
        "cancelled",
      );
      const recs = await s.broker.getMessages([waiting!, held!]);
      assert.deepEqual(
        recs.map((x) => x.state),
        ["cancelled", "cancelled"],
      );
      s.clock.advance(500);
      await s.maintain();
      assert.deepEqual(await s.broker.getMessages([waiting!, held!]), []);
    });

    it("J2.6 setProgress needs the live lock", async () => {
      const [seq] = await s.broker.send("q", { body: "x" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.setProgress("q", seq!, m.lockToken, 30);
      assert.equal((await s.broker.getMessages([seq!]))[0]?.progress, 30);
      await fails(s.broker.setProgress("q", seq!, "nope", 40), LockLostError, "lock_lost");
    });
  });

  describe("§J3 browsing, redriving and deleting settled messages", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("a", { lockDurationMs: 1000, maxDeliveryCount: 1 });
      await s.broker.createQueue("b", { lockDurationMs: 1000, maxDeliveryCount: 1 });
    });
    afterEach(() => s.close());

    it("J3.1 browse lists across queues, newest first, by state and subject", async () => {
      const [a1, a2] = await s.broker.send("a", [
        { body: "1", subject: "x" },
        { body: "2", subject: "y" },
      ]);
      const [b1] = await s.broker.send("b", { body: "3", subject: "x" });
      assert.deepEqual(seqs(await s.broker.browse()), [b1, a2, a1]);
      assert.deepEqual(seqs(await s.broker.browse({ queues: ["a"] })), [a2, a1]);
      assert.deepEqual(seqs(await s.broker.browse({ subject: "x" })), [b1, a1]);
      assert.deepEqual(seqs(await s.broker.browse({ limit: 1, offset: 1 })), [a2]);
      const m = await receiveOne(s.broker, "b");
      assert.deepEqual(seqs(await s.broker.browse({ states: ["locked"] })), [m.seqNumber]);
      assert.deepEqual(await s.broker.browse({ queues: [] }), []);
    });

    it("J3.2 redrive of chosen dead letters gives a fresh budget; deleteSettled removes chosen ones", async () => {
      const [x, y] = await s.broker.send("a", [{ body: "x" }, { body: "y" }]);
      for (const m of await s.broker.receive("a", { maxMessages: 2 })) {
        await s.broker.reject("a", m.seqNumber, m.lockToken!);
      }
      assert.equal(await s.broker.redrive("a", { seqNumbers: [y!] }), 1);
      const [rec] = await s.broker.getMessages([y!]);
      assert.equal(rec?.state, "active");
      assert.equal(rec?.deliveryCount, 0);
      assert.equal(rec?.redriveCount, 1);
      assert.equal(await s.broker.deleteSettled("a", { states: ["dead_lettered"], seqNumbers: [y!] }), 0);
      assert.equal(await s.broker.deleteSettled("a", { states: ["dead_lettered"], seqNumbers: [x!] }), 1);
      assert.deepEqual(await s.broker.getMessages([x!]), []);
    });
  });
});
