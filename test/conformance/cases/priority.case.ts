import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { InvalidArgumentError } from "../../../src/contract/errors.js";
import { bodies, fails, receiveOne, seqs, snapshot } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

cases((factory) => {
  describe("priority (our extension)", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q");
      await s.broker.createQueue("group", { orderingMode: "group_fifo" });
      await s.broker.createQueue("strict", { orderingMode: "strict_fifo" });
    });
    afterEach(() => s.close());

    it("P.1 a higher priority is claimed first; equal priorities in sequence order", async () => {
      await s.broker.send("q", [
        { body: "below", priority: -1 },
        { body: "low" },
        { body: "high-1", priority: 5 },
        { body: "default", priority: 0 },
        { body: "high-2", priority: 5 },
        { body: "negative", priority: -3 },
        { body: "top", priority: 9 },
      ]);
      const got = await s.broker.receive("q", { maxMessages: 10 });
      assert.deepEqual(bodies(got), ["top", "high-1", "high-2", "low", "default", "below", "negative"]);
      assert.deepEqual(
        got.map((m) => m.priority),
        [9, 5, 5, undefined, undefined, -1, -3],
        "the claim priority is reported when not 0",
      );
    });

    it("P.1 a later high-priority send overtakes an earlier backlog", async () => {
      await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      await s.broker.send("q", { body: "urgent", priority: 1 });
      assert.equal((await receiveOne(s.broker, "q")).body.toString(), "urgent");
    });

    it("P.2 priority never breaks FIFO within a group", async () => {
      const [a1, a2, b1] = await s.broker.send("group", [
        { body: "a1", groupId: "a" },
        { body: "a2", groupId: "a", priority: 9 },
        { body: "b1", groupId: "b", priority: 1 },
      ]);
      const got = await s.broker.receive("group", { maxMessages: 10 });
      assert.deepEqual(seqs(got), [b1, a1], "b's head outranks a's head; a2 waits behind a1");
      await s.broker.complete("group", a1!, got[1]!.lockToken!);
      assert.deepEqual(seqs(await s.broker.receive("group", { maxMessages: 10 })), [a2]);
    });

    it("P.2 priority never breaks FIFO within a group on a standard queue either", async () => {
      const [a1] = await s.broker.send("q", [
        { body: "a1", groupId: "a" },
        { body: "a2", groupId: "a", priority: 9 },
      ]);
      assert.deepEqual(seqs(await s.broker.receive("q", { maxMessages: 10 })), [a1]);
    });

    it("P.3 strict_fifo ignores priority", async () => {
      const sent = await s.broker.send("strict", [{ body: "1" }, { body: "2", priority: 9 }]);
      const m = await receiveOne(s.broker, "strict");
      assert.equal(m.seqNumber, sent[0]);
      assert.equal(m.priority, undefined);
      await s.broker.complete("strict", m.seqNumber, m.lockToken);
      assert.equal((await receiveOne(s.broker, "strict")).seqNumber, sent[1]);
    });

    it("P.3 a queue turned strict_fifo delivers its earlier prioritised backlog in sequence order", async () => {
      const sent = await s.broker.send("q", [
        { body: "1" },
        { body: "2", priority: 9 },
        { body: "3", priority: 5 },
      ]);
      await s.broker.createQueue("q", { orderingMode: "strict_fifo" });
      const order: number[] = [];
      for (let i = 0; i < 3; i++) {
        const m = await receiveOne(s.broker, "q");
        order.push(m.seqNumber);
        await s.broker.complete("q", m.seqNumber, m.lockToken);
      }
      assert.deepEqual(order, sent);
    });

    it("P.4 priority survives an abandon and shows in peek", async () => {
      await s.broker.send("q", [{ body: "a" }, { body: "b", priority: 2 }]);
      const m = await receiveOne(s.broker, "q");
      assert.equal(m.body.toString(), "b");
      await s.broker.abandon("q", m.seqNumber, m.lockToken);
      const peeked = await s.broker.peek("q");
      assert.deepEqual(
        peeked.map((p) => p.priority),
        [undefined, 2],
      );
      assert.equal((await receiveOne(s.broker, "q")).body.toString(), "b");
    });

    it("P.5 a non-integer or out-of-range priority is invalid_argument and stores nothing", async () => {
      const before = await snapshot(s.broker, "q");
      await fails(s.broker.send("q", { body: "x", priority: 1.5 }), InvalidArgumentError, "invalid_argument");
      await fails(
        s.broker.send("q", { body: "x", priority: 2 ** 31 }),
        InvalidArgumentError,
        "invalid_argument",
      );
      await fails(
        s.broker.send("q", { body: "x", priority: Number.NaN }),
        InvalidArgumentError,
        "invalid_argument",
      );
      assert.deepEqual(await snapshot(s.broker, "q"), before);
    });
  });
});
