import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { NotFoundError } from "../../../src/contract/errors.js";
import type { MessageState } from "../../../src/contract/types.js";
import { fails, seqs } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

/** Sends `n` small messages in one call. */
const many = (n: number) => Array.from({ length: n }, (_, i) => ({ body: `m${i}` }));

cases((factory) => {
  describe("§1.9 Receive", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000 });
    });
    afterEach(() => s.close());

    it("an unknown queue is not_found", async () => {
      await fails(s.broker.receive("nope"), NotFoundError, "not_found");
      await fails(s.broker.receive("nope", { attemptId: "a" }), NotFoundError, "not_found");
    });

    it("max_messages: absent or <=0 is 1, more than 256 is clamped to 256", async () => {
      await s.broker.send("q", many(300));
      assert.equal((await s.broker.receive("q")).length, 1);
      assert.equal((await s.broker.receive("q", { maxMessages: 0 })).length, 1);
      assert.equal((await s.broker.receive("q", { maxMessages: -5 })).length, 1);
      assert.equal((await s.broker.receive("q", { maxMessages: 1000 })).length, 256);
      assert.equal((await s.broker.receive("q", { maxMessages: 1000 })).length, 300 - 259);
    });

    it("a negative wait is no wait", async () => {
      assert.deepEqual(await s.broker.receive("q", { waitMs: -100 }), []);
    });

    it("a batch claims in sequence order, each with its own lock", async () => {
      const sent = await s.broker.send("q", many(5));
      const got = await s.broker.receive("q", { maxMessages: 5 });
      assert.deepEqual(seqs(got), sent);
      assert.ok(got.every((m) => m.lockedUntil === s.clock.now() + 1000 && m.deliveryCount === 1));
      assert.equal((await s.broker.stats("q")).locked, 5);
    });

    it("receive-and-delete returns the message without a token and deletes it", async () => {
      const sent = await s.broker.send("q", many(3));
      const got = await s.broker.receive("q", { maxMessages: 2, mode: "receive-and-delete" });
      assert.deepEqual(seqs(got), sent.slice(0, 2));
      for (const m of got) {
        assert.equal(m.lockToken, undefined);
        assert.equal(m.lockedUntil, s.clock.now() + 1000);
        assert.equal(m.deliveryCount, 1);
      }
      assert.deepEqual(seqs(await s.broker.peek("q")), sent.slice(2));
    });

    it("a batch stops at the 32 MiB body budget; the message that crosses it is still returned", async () => {
      await s.broker.createQueue("big");
      const body = Buffer.alloc(1_000_000, 7);
      for (let i = 0; i < 4; i++)
        await s.broker.send(
          "big",
          Array.from({ length: 10 }, () => ({ body })),
        );
      const got = await s.broker.receive("big", { maxMessages: 256 });
      assert.equal(got.length, 34, "33 MB is under 32 MiB, the 34th crosses it");
      const stats = await s.broker.stats("big");
      assert.deepEqual([stats.locked, stats.active], [34, 6], "only returned messages are locked");
      const peeked = await s.broker.peek("big", { max: 1000 });
      assert.equal(peeked.length, 34, "peek has the same budget");
      const rest = await s.broker.peek("big", { fromSeq: peeked.at(-1)!.seqNumber + 1, max: 1000 });
      assert.equal(rest.length, 6, "page onward with fromSeq");
    });

    it("maxBytes (our extension) cuts an answer sooner: after the message that crosses it, one at least", async () => {
      await s.broker.createQueue("sized");
      const body = Buffer.alloc(1000, 7);
      await s.broker.send(
        "sized",
        Array.from({ length: 10 }, () => ({ body })),
      );
      const peek = (maxBytes: number) => s.broker.peek("sized", { max: 1000, maxBytes });
      assert.equal((await peek(2500)).length, 3, "2,500 bytes: the third message crosses it");
      assert.equal((await peek(3000)).length, 3, "exactly 3,000: the third reaches it");
      assert.equal((await peek(1)).length, 1, "one message at least");
      assert.equal((await peek(0)).length, 10, "not positive: the default budget");
      assert.equal((await s.broker.peek("sized", { max: 1000, maxBytes: () => 1500 })).length, 2);
      const got = await s.broker.receive("sized", { maxMessages: 10, maxBytes: 4500 });
      assert.equal(got.length, 5);
      const asked = await s.broker.receive("sized", { maxMessages: 10, maxBytes: () => 1 });
      assert.equal(asked.length, 1, "a function is asked when the claim runs");
      assert.deepEqual(
        [(await s.broker.stats("sized")).locked, (await s.broker.stats("sized")).active],
        [6, 4],
        "only returned messages are locked",
      );
      for (const m of got.slice(0, 3)) await s.broker.defer("sized", m.seqNumber, m.lockToken!);
      const deferred = got.slice(0, 3).map((m) => m.seqNumber);
      assert.equal((await s.broker.receiveDeferred("sized", deferred, { maxBytes: 1500 })).length, 2);
      assert.deepEqual(
        seqs(await s.broker.receiveDeferred("sized", deferred)),
        deferred.slice(2),
        "the rest stay deferred",
      );
    });

    it("maxBytes holds across a receive's whole batch, properties counted, in either mode", async () => {
      // 1,000-byte bodies with 9 bytes of properties ({"k":"v"}): 100 messages reach 100,900
      // bytes exactly, so the 100th ends the batch (counting bodies alone, it would take 101).
      await s.broker.createQueue("budget");
      const body = Buffer.alloc(1000, 7);
      const sent = await s.broker.send(
        "budget",
        Array.from({ length: 300 }, () => ({ body, properties: { k: "v" } })),
      );
      const locked = await s.broker.receive("budget", { maxMessages: 256, maxBytes: 100_900 });
      assert.deepEqual(seqs(locked), sent.slice(0, 100));
      const deleted = await s.broker.receive("budget", {
        maxMessages: 256,
        maxBytes: 100_901,
        mode: "receive-and-delete",
      });
      assert.deepEqual(seqs(deleted), sent.slice(100, 201), "100,901: the 101st crosses it");
      const rest = await s.broker.receive("budget", { maxMessages: 256 });
      assert.deepEqual(seqs(rest), sent.slice(201), "without maxBytes: every message left");
      const stats = await s.broker.stats("budget");
      assert.deepEqual([stats.locked, stats.active, stats.total], [199, 0, 199]);
    });

    it("receiveDeferred's maxBytes holds across a long list; numbers not deferred are skipped", async () => {
      await s.broker.createQueue("later", { lockDurationMs: 60_000 });
      const body = Buffer.alloc(1000, 7);
      const sent = await s.broker.send(
        "later",
        Array.from({ length: 150 }, () => ({ body })),
      );
      for (const m of await s.broker.receive("later", { maxMessages: 150 }))
        await s.broker.defer("later", m.seqNumber, m.lockToken!);
      // Every other number first, then a number that is not deferred (skipped), then the rest.
      const asked = [
        ...sent.filter((_, k) => k % 2 === 0),
        999_999_999,
        ...sent.filter((_, k) => k % 2 === 1),
      ];
      const first = await s.broker.receiveDeferred("later", asked, { maxBytes: 100_000 });
      assert.deepEqual(seqs(first), asked.filter((n) => n !== 999_999_999).slice(0, 100));
      const rest = await s.broker.receiveDeferred("later", asked);
      assert.deepEqual(seqs(rest), asked.filter((n) => n !== 999_999_999).slice(100));
      assert.equal((await s.broker.stats("later")).locked, 150);
    });
  });

  describe("§1.9 Peek", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000 });
    });
    afterEach(() => s.close());

    it("an unknown queue is an empty page, not an error", async () => {
      assert.deepEqual(await s.broker.peek("nope"), []);
      assert.deepEqual(await s.broker.peek("nope", { state: "active", fromSeq: 5, max: 3 }), []);
    });

    it("max: absent or <=0 is 32, more than 1000 is clamped to 1000", async () => {
      await s.broker.send("q", many(1001));
      assert.equal((await s.broker.peek("q")).length, 32);
      assert.equal((await s.broker.peek("q", { max: 0 })).length, 32);
      assert.equal((await s.broker.peek("q", { max: -1 })).length, 32);
      assert.equal((await s.broker.peek("q", { max: 7 })).length, 7);
      assert.equal((await s.broker.peek("q", { max: 5000 })).length, 1000);
    });

    it("pages by an inclusive fromSeq, in sequence order across states", async () => {
      const sent = await s.broker.send("q", many(5));
      await s.broker.receive("q");
      await s.broker.schedule("q", { body: "later" }, s.clock.now() + 1000);
      const first = await s.broker.peek("q", { max: 2 });
      assert.deepEqual(seqs(first), sent.slice(0, 2));
      assert.deepEqual(
        first.map((m) => m.state),
        ["locked", "active"],
      );
      const second = await s.broker.peek("q", { fromSeq: sent[2], max: 2 });
      assert.deepEqual(seqs(second), sent.slice(2, 4));
      const all = await s.broker.peek("q", { fromSeq: sent[4] });
      assert.equal(all.length, 2);
      assert.equal(all[1]?.state, "scheduled");
    });

    it("filters by exact state; an unknown state matches nothing", async () => {
      const [a, b] = await s.broker.send("q", many(3));
      await s.broker.receive("q", { maxMessages: 2 }).then(async ([ma, mb]) => {
        await s.broker.defer("q", mb!.seqNumber, mb!.lockToken!);
        assert.equal(ma?.seqNumber, a);
      });
      assert.deepEqual(seqs(await s.broker.peek("q", { state: "deferred" })), [b]);
      assert.deepEqual(seqs(await s.broker.peek("q", { state: "locked" })), [a]);
      assert.equal((await s.broker.peek("q", { state: "active" })).length, 1);
      assert.deepEqual(await s.broker.peek("q", { state: "bogus" as MessageState }), []);
    });

    it("changes nothing", async () => {
      await s.broker.send("q", many(2));
      await s.broker.peek("q");
      const got = await s.broker.receive("q", { maxMessages: 2 });
      assert.ok(got.every((m) => m.deliveryCount === 1));
    });
  });
});
