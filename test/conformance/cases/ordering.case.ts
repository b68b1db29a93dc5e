import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { GroupRequiredError } from "../../../src/contract/errors.js";
import type { OrderingMode } from "../../../src/contract/types.js";
import { bodies, fails, receiveOne, seqs, snapshot } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

cases((factory) => {
  describe("§5 ordering modes", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      const config = { lockDurationMs: 1000, maxDeliveryCount: 2 };
      await s.broker.createQueue("std", config);
      await s.broker.createQueue("group", { ...config, orderingMode: "group_fifo" });
      await s.broker.createQueue("strict", { ...config, orderingMode: "strict_fifo" });
    });
    afterEach(() => s.close());

    it("5.1 standard: same-group messages are FIFO with one in flight per group", async () => {
      const [a1, a2, a3] = await s.broker.send("std", [
        { body: "a1", groupId: "a" },
        { body: "a2", groupId: "a" },
        { body: "a3", groupId: "a" },
      ]);
      const m1 = await receiveOne(s.broker, "std");
      assert.equal(m1.seqNumber, a1);
      assert.deepEqual(await s.broker.receive("std", { maxMessages: 10 }), [], "one in flight per group");
      await s.broker.complete("std", a1!, m1.lockToken);
      const m2 = await s.broker.receive("std", { maxMessages: 10 });
      assert.deepEqual(seqs(m2), [a2]);
      await s.broker.complete("std", a2!, m2[0]!.lockToken!);
      assert.deepEqual(seqs(await s.broker.receive("std", { maxMessages: 10 })), [a3]);
    });

    it("5.1 standard: groups run in parallel; a batch takes one message per group", async () => {
      const [a1, , b1, , c1] = await s.broker.send("std", [
        { body: "a1", groupId: "a" },
        { body: "a2", groupId: "a" },
        { body: "b1", groupId: "b" },
        { body: "b2", groupId: "b" },
        { body: "c1", groupId: "c" },
      ]);
      const got = await s.broker.receive("std", { maxMessages: 10 });
      assert.deepEqual(seqs(got), [a1, b1, c1]);
    });

    it("5.1 standard: ungrouped messages are fully parallel and never blocked", async () => {
      const sent = await s.broker.send("std", [
        { body: "g1", groupId: "g" },
        { body: "u1" },
        { body: "g2", groupId: "g" },
        { body: "u2" },
        { body: "u3" },
      ]);
      const got = await s.broker.receive("std", { maxMessages: 10 });
      assert.deepEqual(seqs(got), [sent[0], sent[1], sent[3], sent[4]]);
    });

    it("5.1 the claim rule is the same on standard (grouped) and group_fifo", async () => {
      for (const q of ["std", "group"]) {
        const [x1, x2, y1] = await s.broker.send(q, [
          { body: "x1", groupId: "x" },
          { body: "x2", groupId: "x" },
          { body: "y1", groupId: "y" },
        ]);
        const first = await s.broker.receive(q, { maxMessages: 10 });
        assert.deepEqual(seqs(first), [x1, y1], q);
        await s.broker.abandon(q, x1!, first[0]!.lockToken!);
        const second = await s.broker.receive(q, { maxMessages: 10 });
        assert.deepEqual(seqs(second), [x1], `${q}: the abandoned head comes back before x2`);
        assert.ok(x2);
      }
    });

    it("5.2 group_fifo: a send without group_id is group_required and stores nothing", async () => {
      await s.broker.send("group", { body: "ok", groupId: "g" });
      const before = await snapshot(s.broker, "group");
      await fails(s.broker.send("group", { body: "no group" }), GroupRequiredError, "group_required");
      await fails(s.broker.send("group", { body: "", groupId: "" }), GroupRequiredError, "group_required");
      await fails(
        s.broker.send("group", [{ body: "1", groupId: "g" }, { body: "2" }]),
        GroupRequiredError,
        "group_required",
      );
      await fails(
        s.broker.schedule("group", [{ body: "1", groupId: "g" }, { body: "2" }], s.clock.now() + 1000),
        GroupRequiredError,
        "group_required",
      );
      assert.deepEqual(await snapshot(s.broker, "group"), before, "the whole request rolled back");
    });

    it("5.3 strict_fifo: only the head is claimable, whatever the group", async () => {
      const [m1, m2, m3] = await s.broker.send("strict", [
        { body: "1", groupId: "a" },
        { body: "2", groupId: "b" },
        { body: "3" },
      ]);
      const first = await s.broker.receive("strict", { maxMessages: 10 });
      assert.deepEqual(seqs(first), [m1], "at most one in flight per queue");
      assert.deepEqual(await s.broker.receive("strict", { maxMessages: 10 }), []);
      await s.broker.complete("strict", m1!, first[0]!.lockToken!);
      const second = await s.broker.receive("strict", { maxMessages: 10 });
      assert.deepEqual(seqs(second), [m2]);
      await s.broker.complete("strict", m2!, second[0]!.lockToken!);
      assert.deepEqual(seqs(await s.broker.receive("strict", { maxMessages: 10 })), [m3]);
    });

    for (const [queue, mode] of [
      ["std", "standard"],
      ["group", "group_fifo"],
      ["strict", "strict_fifo"],
    ] as [string, OrderingMode][]) {
      it(`5.4 head-of-line survives lock expiry (${mode})`, async () => {
        const [h, next, other] = await s.broker.send(queue, [
          { body: "h", groupId: "a" },
          { body: "next", groupId: "a" },
          { body: "other", groupId: "b" },
        ]);
        const head = await s.broker.receive(queue, { maxMessages: mode === "strict_fifo" ? 1 : 2 });
        assert.equal(head[0]?.seqNumber, h);
        if (mode !== "strict_fifo") {
          assert.deepEqual(seqs(head), [h, other]);
          await s.broker.complete(queue, other!, head[1]!.lockToken!);
        }
        s.clock.advance(1000);
        assert.deepEqual(
          await s.broker.receive(queue, { maxMessages: 10 }),
          [],
          "an expired, unreaped head still blocks",
        );
        await s.maintain();
        const again = await s.broker.receive(queue, { maxMessages: 10 });
        assert.deepEqual(seqs(again), [h], "the head itself is redelivered first");
        assert.equal(again[0]?.deliveryCount, 2);
        s.clock.advance(1000);
        await s.maintain();
        const [dead] = await s.broker.peek(queue, { state: "dead_lettered" });
        assert.equal(dead?.seqNumber, h, "at max the head is dead-lettered");
        const unblocked = await s.broker.receive(queue, { maxMessages: 10 });
        assert.equal(unblocked[0]?.seqNumber, next, "which unblocks its line");
        if (mode === "strict_fifo") assert.equal(unblocked.length, 1);
      });

      it(`5.5 head-of-line survives an abandon backoff (${mode})`, async () => {
        const [h, next, other] = await s.broker.send(queue, [
          { body: "h", groupId: "a" },
          { body: "next", groupId: "a" },
          { body: "other", groupId: "b" },
        ]);
        const head = await receiveOne(s.broker, queue);
        assert.equal(head.seqNumber, h);
        await s.broker.abandon(queue, h!, head.lockToken, { delayMs: 5000 });
        const during = await s.broker.receive(queue, { maxMessages: 10 });
        if (mode === "strict_fifo") assert.deepEqual(during, [], "the parked head blocks the whole queue");
        else {
          assert.deepEqual(seqs(during), [other], "other groups proceed; the parked head blocks its own");
          await s.broker.complete(queue, other!, during[0]!.lockToken!);
        }
        s.clock.advance(5000);
        await s.maintain();
        const again = await s.broker.receive(queue, { maxMessages: 10 });
        assert.deepEqual(seqs(again), [h], "then it is delivered first");
        await s.broker.complete(queue, h!, again[0]!.lockToken!);
        assert.equal((await s.broker.receive(queue))[0]?.seqNumber, next);
      });

      it(`5.x a scheduled send with a lower seq blocks its line until it activates and settles (${mode})`, async () => {
        const [sched] = await s.broker.schedule(queue, { body: "s", groupId: "a" }, s.clock.now() + 1000);
        const [later, other] = await s.broker.send(queue, [
          { body: "later", groupId: "a" },
          { body: "other", groupId: "b" },
        ]);
        const during = await s.broker.receive(queue, { maxMessages: 10 });
        if (mode === "strict_fifo") assert.deepEqual(during, []);
        else {
          assert.deepEqual(seqs(during), [other]);
          await s.broker.complete(queue, other!, during[0]!.lockToken!);
        }
        s.clock.advance(1000);
        await s.maintain();
        const first = await s.broker.receive(queue, { maxMessages: 10 });
        assert.deepEqual(seqs(first), [sched]);
        assert.deepEqual(await s.broker.receive(queue), [], "still blocks while locked");
        await s.broker.complete(queue, sched!, first[0]!.lockToken!);
        assert.equal((await s.broker.receive(queue))[0]?.seqNumber, later);
      });

      it(`5.x dead-lettered rows never block (${mode})`, async () => {
        const [h, next] = await s.broker.send(queue, [
          { body: "h", groupId: "a" },
          { body: "next", groupId: "a" },
        ]);
        const head = await receiveOne(s.broker, queue);
        await s.broker.reject(queue, h!, head.lockToken);
        assert.deepEqual(seqs(await s.broker.receive(queue)), [next]);
      });
    }

    it("5.x an expired head does not block its group", async () => {
      await s.broker.send("group", { body: "h", groupId: "a" }, { ttlMs: 1000 });
      const [next] = await s.broker.send("group", { body: "next", groupId: "a" });
      s.clock.advance(1000);
      assert.deepEqual(seqs(await s.broker.receive("group", { maxMessages: 10 })), [next]);
    });

    it("1.9 receive-and-delete: a deleted head no longer blocks its group (quirk kept)", async () => {
      const sent = await s.broker.send("group", [
        { body: "a1", groupId: "a" },
        { body: "a2", groupId: "a" },
        { body: "a3", groupId: "a" },
      ]);
      const got = await s.broker.receive("group", { maxMessages: 10, mode: "receive-and-delete" });
      assert.deepEqual(seqs(got), sent, "one batch returns consecutive messages of the group, in order");
      const strict = await s.broker.send("strict", [{ body: "1" }, { body: "2" }]);
      const fromStrict = await s.broker.receive("strict", { maxMessages: 10, mode: "receive-and-delete" });
      assert.deepEqual(seqs(fromStrict), strict);
      assert.deepEqual(bodies(fromStrict), ["1", "2"]);
      assert.equal((await s.broker.stats("group")).total, 0);
      assert.equal((await s.broker.stats("strict")).total, 0);
    });
  });
});
