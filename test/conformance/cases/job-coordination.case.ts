import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { receiveOne, seqs } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

// Coordination features the job face is built on: pause, multi-queue claims with gates,
// settlement waits, worker heartbeats and named leases.
cases((factory) => {
  describe("§J4 pause, receiveAny and claim gates", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q1", { lockDurationMs: 10_000 });
      await s.broker.createQueue("q2", { lockDurationMs: 10_000 });
    });
    afterEach(() => s.close());

    it("J4.1 a paused queue yields nothing until resumed; listQueues shows it", async () => {
      await s.broker.send("q1", { body: "x" });
      await s.broker.pauseQueue("q1");
      await s.broker.pauseQueue("q1");
      assert.deepEqual(await s.broker.receive("q1"), []);
      assert.equal((await s.broker.listQueues()).find((q) => q.name === "q1")?.paused, true);
      await s.broker.resumeQueue("q1");
      assert.equal((await s.broker.receive("q1")).length, 1);
      assert.equal((await s.broker.listQueues()).find((q) => q.name === "q1")?.paused, undefined);
    });

    it("J4.2 receiveAny takes queues in order and names each message's queue", async () => {
      const [a] = await s.broker.send("q1", { body: "a" });
      const [b, c] = await s.broker.send("q2", [{ body: "b" }, { body: "c" }]);
      const got = await s.broker.receiveAny(["q1", "nope", "q2"], { maxMessages: 2 });
      assert.deepEqual(seqs(got), [a, b]);
      assert.deepEqual(
        got.map((m) => m.queue),
        ["q1", "q2"],
      );
      assert.ok(got.every((m) => m.lockToken));
      const rest = await s.broker.receiveAny(["q1", "q2"], { maxMessages: 5 });
      assert.deepEqual(seqs(rest), [c]);
    });

    it("J4.6 receiveAny's answer has one 32 MiB budget across its queues", async () => {
      const body = Buffer.alloc(1024 * 1024, 7);
      const one: number[] = [];
      const two: number[] = [];
      for (let i = 0; i < 20; i++) {
        one.push(...(await s.broker.send("q1", { body })));
        two.push(...(await s.broker.send("q2", { body })));
      }
      const got = await s.broker.receiveAny(["q1", "q2"], { maxMessages: 256 });
      assert.deepEqual(seqs(got), [...one, ...two.slice(0, 12)], "the 32nd message crosses it");
      assert.equal((await s.broker.stats("q2")).active, 8, "the others were not locked");
    });

    it("J4.6b receiveAny's maxBytes (our extension) is one budget across its queues too", async () => {
      const body = Buffer.alloc(1000, 7);
      const [a] = await s.broker.send("q1", { body });
      const [b, c] = await s.broker.send("q2", [{ body }, { body }]);
      const got = await s.broker.receiveAny(["q1", "q2"], { maxMessages: 10, maxBytes: 1500 });
      assert.deepEqual(seqs(got), [a, b], "the second message crosses 1,500 bytes");
      assert.deepEqual(seqs(await s.broker.receiveAny(["q1", "q2"], { maxMessages: 10 })), [c]);
    });

    it("J4.3 receiveAny long-polls on every queue", async () => {
      const pending = s.broker.receiveAny(["q1", "q2"], { waitMs: 5000 });
      await new Promise((r) => setTimeout(r, 50));
      const [seq] = await s.broker.send("q2", { body: "late" });
      const got = await pending;
      assert.deepEqual(seqs(got), [seq]);
    });

    it("J4.4 a maxLocked gate holds back a subject's messages without delivering them", async () => {
      await s.broker.send("q1", [
        { body: "1", subject: "capped" },
        { body: "2", subject: "capped" },
        { body: "3", subject: "free" },
      ]);
      const gates = [{ subject: "capped", maxLocked: 1 }];
      const got = await s.broker.receiveAny(["q1"], { maxMessages: 10, gates });
      assert.deepEqual(
        got.map((m) => m.subject),
        ["capped", "free"],
      );
      assert.deepEqual(await s.broker.receiveAny(["q1"], { maxMessages: 10, gates }), []);
      await s.broker.complete("q1", got[0]!.seqNumber, got[0]!.lockToken!);
      const next = await s.broker.receiveAny(["q1"], { maxMessages: 10, gates });
      assert.equal(next.length, 1);
      assert.equal(next[0]?.deliveryCount, 1, "held back, never delivered before");
    });

    it("J4.5 a rate gate is a shared token bucket", async () => {
      await s.broker.send(
        "q1",
        Array.from({ length: 5 }, () => ({ body: "r", subject: "rated" })),
      );
      const gates = [{ subject: "rated", rate: { limit: 2, intervalMs: 1000 } }];
      assert.equal((await s.broker.receiveAny(["q1"], { maxMessages: 10, gates })).length, 2);
      assert.equal((await s.broker.receiveAny(["q1"], { maxMessages: 10, gates })).length, 0);
      s.clock.advance(500);
      assert.equal((await s.broker.receiveAny(["q1"], { maxMessages: 10, gates })).length, 1);
      s.clock.advance(1000);
      assert.equal((await s.broker.receiveAny(["q1"], { maxMessages: 10, gates })).length, 2);
    });
  });

  describe("§J5 settlement waits, workers and leases", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 10_000 });
    });
    afterEach(() => s.close());

    it("J5.1 awaitSettled wakes when a message settles, and reports unknown ones as settled", async () => {
      const [seq] = await s.broker.send("q", { body: "x" });
      assert.deepEqual(await s.broker.awaitSettled([seq!]), []);
      assert.deepEqual(await s.broker.awaitSettled([987654]), [987654]);
      const m = await receiveOne(s.broker, "q");
      const waiting = s.broker.awaitSettled([seq!], { waitMs: 5000 });
      await new Promise((r) => setTimeout(r, 20));
      await s.broker.complete("q", seq!, m.lockToken, { retainMs: 1000 });
      assert.deepEqual(await waiting, [seq]);
    });

    it("J5.1 awaitSettled on a message nobody settles returns [] once its wait is over", async () => {
      const [seq] = await s.broker.send("q", { body: "x" });
      const started = Date.now();
      assert.deepEqual(await s.broker.awaitSettled([seq!], { waitMs: 300 }), []);
      assert.ok(Date.now() - started >= 250, "it waited");
    });

    it("J5.2 heartbeats register workers; a stale one is reaped and reported once", async () => {
      const first = await s.broker.heartbeat({ workerId: "w1", queues: ["q"], status: "active", pid: 7 });
      assert.equal(first.registered, true);
      assert.equal(
        (await s.broker.heartbeat({ workerId: "w1", queues: ["q"], status: "active" })).registered,
        false,
      );
      const [w] = await s.broker.listWorkers();
      assert.equal(w?.workerId, "w1");
      assert.equal(w?.startedAt, s.clock.now());
      s.clock.advance(31_000);
      const hb = await s.broker.heartbeat({ workerId: "w2", queues: [], status: "active" });
      assert.deepEqual(
        hb.reaped.map((r) => r.workerId),
        ["w1"],
      );
      assert.deepEqual(
        (await s.broker.heartbeat({ workerId: "w2", queues: [], status: "active" })).reaped,
        [],
      );
      assert.equal(await s.broker.removeWorker("w2"), true);
      assert.equal(await s.broker.removeWorker("w2"), false);
      assert.deepEqual(await s.broker.listWorkers(), []);
    });

    it("J5.3 a named lease has one owner until it lapses", async () => {
      assert.equal(await s.broker.acquireLock("leader", "a", 1000), true);
      assert.equal(await s.broker.acquireLock("leader", "b", 1000), false);
      assert.equal(await s.broker.acquireLock("leader", "a", 1000), true, "renewed by its owner");
      s.clock.advance(1000);
      assert.equal(await s.broker.acquireLock("leader", "b", 1000), true, "lapsed: taken over");
      assert.equal(await s.broker.releaseLock("leader", "a"), false);
      assert.equal(await s.broker.releaseLock("leader", "b"), true);
      assert.equal(await s.broker.acquireLock("leader", "a", 1000), true);
    });

    it("J5.4 a name no worker, lease or queue can have is simply not found by the record verbs", async () => {
      const bad = "a\u0000b";
      assert.equal(await s.broker.removeWorker(bad), false);
      assert.equal(await s.broker.releaseLock(bad, bad), false);
      assert.equal(await s.broker.cancelMessage(bad, 1), "none");
      assert.deepEqual(await s.broker.browse({ queues: [bad] }), []);
      assert.equal(await s.broker.deleteSettled(bad), 0);
      assert.equal(await s.broker.promoteMessages(bad, [1]), 0);
      assert.equal(await s.broker.removeMessages(bad, [1]), 0);
    });
  });
});
