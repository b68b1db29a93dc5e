import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { InvalidArgumentError, NotFoundError } from "../../../src/contract/errors.js";
import { bodies, deadLetter, fails, receiveOne, seqs, snapshot } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

cases((factory) => {
  describe("§6 dead-letter queue", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000, maxDeliveryCount: 2 });
      await s.broker.createQueue("target");
    });
    afterEach(() => s.close());

    it("6.1 reaching max_delivery_count through abandon dead-letters with MaxDeliveryCountExceeded", async () => {
      await s.broker.send("q", { body: "x" });
      const first = await receiveOne(s.broker, "q");
      await s.broker.abandon("q", first.seqNumber, first.lockToken);
      const second = await receiveOne(s.broker, "q");
      await s.broker.abandon("q", second.seqNumber, second.lockToken);
      const [dead] = await s.broker.peek("q");
      assert.equal(dead?.state, "dead_lettered");
      assert.equal(dead?.deadLetterReason, "MaxDeliveryCountExceeded");
      assert.equal(dead?.deliveryCount, 2);
    });

    it("6.1 reaching max_delivery_count through the reaper dead-letters too", async () => {
      await s.broker.send("q", { body: "x" });
      for (let i = 0; i < 2; i++) {
        await receiveOne(s.broker, "q");
        s.clock.advance(1000);
        await s.maintain();
      }
      const [dead] = await s.broker.peek("q");
      assert.equal(dead?.state, "dead_lettered");
      assert.equal(dead?.deadLetterReason, "MaxDeliveryCountExceeded");
    });

    it("6.1 the DLQ is a state of the same queue, not another queue", async () => {
      await deadLetter(s.broker, "q", 2);
      const stats = await s.broker.stats("q");
      assert.equal(stats.deadLettered, 2);
      assert.equal(stats.total, 2);
      assert.deepEqual(
        (await s.broker.listQueues()).map((q) => q.name),
        ["q", "target"],
      );
    });

    it("6.2 an in-place redrive makes dead letters active with the same seq and a reset count", async () => {
      const sent = await deadLetter(s.broker, "q", 2);
      const before = await s.broker.peek("q");
      s.clock.advance(500);
      assert.equal(await s.broker.redrive("q"), 2);
      const after = await s.broker.peek("q");
      assert.deepEqual(seqs(after), sent);
      for (const [i, m] of after.entries()) {
        assert.equal(m.state, "active");
        assert.equal(m.deliveryCount, 0);
        assert.equal(m.deadLetterReason, undefined);
        assert.equal(m.deadLetterDescription, undefined);
        assert.equal(m.enqueuedAt, before[i]!.enqueuedAt, "enqueued_at is kept");
      }
      const again = await s.broker.receive("q", { maxMessages: 10 });
      assert.deepEqual(seqs(again), sent);
      assert.ok(again.every((m) => m.deliveryCount === 1));
    });

    it("6.2 target equal to the queue is an in-place redrive", async () => {
      const sent = await deadLetter(s.broker, "q", 1);
      assert.equal(await s.broker.redrive("q", { target: "q" }), 1);
      assert.deepEqual(seqs(await s.broker.peek("q", { state: "active" })), sent);
    });

    it("6.2 a redrive into a target queue re-enqueues with a fresh seq and enqueued_at = now", async () => {
      const [seq] = await s.broker.send(
        "q",
        {
          body: "payload",
          messageId: "id-1",
          correlationId: "c",
          replyTo: "r",
          groupId: "g",
          contentType: "text/plain",
          subject: "s.t",
          properties: { k: "v" },
        },
        { ttlMs: 60_000 },
      );
      const m = await receiveOne(s.broker, "q");
      await s.broker.reject("q", m.seqNumber, m.lockToken, { reason: "R" });
      s.clock.advance(1234);
      assert.equal(await s.broker.redrive("q", { target: "target" }), 1);
      assert.equal((await s.broker.stats("q")).total, 0, "the original is gone");
      const [moved] = await s.broker.peek("target");
      assert.ok(moved && moved.seqNumber > seq!);
      assert.equal(moved.state, "active");
      assert.equal(moved.enqueuedAt, s.clock.now());
      assert.equal(moved.expiresAt, undefined, "no TTL");
      assert.equal(moved.deliveryCount, 0);
      assert.equal(moved.deadLetterReason, undefined);
      assert.equal(moved.body.toString(), "payload");
      assert.deepEqual(
        [
          moved.messageId,
          moved.correlationId,
          moved.replyTo,
          moved.groupId,
          moved.contentType,
          moved.subject,
        ],
        ["id-1", "c", "r", "g", "text/plain", "s.t"],
      );
      assert.deepEqual(moved.properties, { k: "v" });
    });

    it("6.2 redrive max takes the oldest dead letters first", async () => {
      const sent = await deadLetter(s.broker, "q", 3);
      assert.equal(await s.broker.redrive("q", { max: 2 }), 2);
      assert.deepEqual(seqs(await s.broker.peek("q", { state: "active" })), sent.slice(0, 2));
      assert.deepEqual(seqs(await s.broker.peek("q", { state: "dead_lettered" })), sent.slice(2));
    });

    it("6.2 redrive older_than only moves dead letters enqueued before now - older_than", async () => {
      const old = await deadLetter(s.broker, "q", 1, "old");
      s.clock.advance(10_000);
      const recent = await deadLetter(s.broker, "q", 1, "new");
      s.clock.advance(1000);
      assert.equal(await s.broker.redrive("q", { olderThanMs: 5000, target: "target" }), 1);
      assert.deepEqual(bodies(await s.broker.peek("target")), ["old0"]);
      assert.deepEqual(seqs(await s.broker.peek("q")), recent);
      assert.ok(old);
    });

    it("6.2 redrive with a rate moves everything (one chunk when the rate covers it)", async () => {
      await deadLetter(s.broker, "q", 3);
      assert.equal(await s.broker.redrive("q", { ratePerSec: 10 }), 3);
      assert.equal((await s.broker.stats("q")).active, 3);
    });

    it("6.2 redrive only moves dead letters", async () => {
      await deadLetter(s.broker, "q", 1);
      await s.broker.send("q", { body: "live" });
      await s.broker.schedule("q", { body: "later" }, s.clock.now() + 1000);
      assert.equal(await s.broker.redrive("q", { target: "target" }), 1);
      const stats = await s.broker.stats("q");
      assert.deepEqual([stats.active, stats.scheduled, stats.deadLettered], [1, 1, 0]);
    });

    it("6.2 redrive to an unknown target or from an unknown queue is not_found and moves nothing", async () => {
      await deadLetter(s.broker, "q", 2);
      const before = await snapshot(s.broker, "q");
      await fails(s.broker.redrive("q", { target: "nope" }), NotFoundError, "not_found");
      await fails(s.broker.redrive("nope"), NotFoundError, "not_found");
      assert.deepEqual(await snapshot(s.broker, "q"), before);
    });

    it("6.2 negative redrive bounds are invalid_argument", async () => {
      await deadLetter(s.broker, "q", 1);
      const before = await snapshot(s.broker, "q");
      await fails(s.broker.redrive("q", { max: -1 }), InvalidArgumentError, "invalid_argument");
      await fails(s.broker.redrive("q", { olderThanMs: -1 }), InvalidArgumentError, "invalid_argument");
      await fails(s.broker.redrive("q", { ratePerSec: -1 }), InvalidArgumentError, "invalid_argument");
      assert.deepEqual(await snapshot(s.broker, "q"), before);
    });

    it("6.2 an in-place redrive clears a TTL that has already lapsed (deliberate difference)", async () => {
      const [seq] = await s.broker.send("q", { body: "x" }, { ttlMs: 1000 });
      s.clock.advance(1000);
      await s.maintain();
      assert.equal((await s.broker.peek("q"))[0]?.deadLetterReason, "TTLExpired");
      assert.equal(await s.broker.redrive("q"), 1);
      const [m] = await s.broker.peek("q");
      assert.equal(m?.expiresAt, undefined);
      s.clock.advance(60_000);
      await s.maintain();
      assert.equal((await receiveOne(s.broker, "q")).seqNumber, seq, "it does not expire again");
    });

    it("6.2 an in-place redrive keeps a TTL that has not lapsed", async () => {
      await s.broker.send("q", { body: "x" }, { ttlMs: 10_000 });
      const m = await receiveOne(s.broker, "q");
      await s.broker.reject("q", m.seqNumber, m.lockToken);
      await s.broker.redrive("q");
      assert.equal((await s.broker.peek("q"))[0]?.expiresAt, s.clock.now() + 10_000);
    });

    it("6.2 a redriven message keeps strict order in a strict_fifo target", async () => {
      await s.broker.createQueue("strict", { orderingMode: "strict_fifo" });
      await s.broker.send("q", { body: "urgent", priority: 9 });
      const m = await receiveOne(s.broker, "q");
      await s.broker.reject("q", m.seqNumber, m.lockToken);
      const [first] = await s.broker.send("strict", { body: "first" });
      await s.broker.redrive("q", { target: "strict" });
      assert.equal((await receiveOne(s.broker, "strict")).seqNumber, first);
    });

    it("6.2 purge deletes every dead letter by default, and nothing else", async () => {
      await deadLetter(s.broker, "q", 3);
      await s.broker.send("q", { body: "live" });
      assert.equal(await s.broker.purge("q"), 3);
      const stats = await s.broker.stats("q");
      assert.deepEqual([stats.active, stats.deadLettered, stats.total], [1, 0, 1]);
      assert.equal(await s.broker.purge("q"), 0);
    });

    it("6.2 purge max deletes the oldest first; older_than scopes by enqueued_at", async () => {
      const old = await deadLetter(s.broker, "q", 3, "old");
      s.clock.advance(10_000);
      const recent = await deadLetter(s.broker, "q", 2, "new");
      assert.equal(await s.broker.purge("q", { max: 2 }), 2);
      assert.deepEqual(seqs(await s.broker.peek("q")), [old[2]!, ...recent]);
      assert.equal(await s.broker.purge("q", { olderThanMs: 5000 }), 1);
      assert.deepEqual(seqs(await s.broker.peek("q")), recent);
    });

    it("6.2 purge: negative bounds are invalid_argument; an unknown queue is not_found", async () => {
      await deadLetter(s.broker, "q", 1);
      const before = await snapshot(s.broker, "q");
      await fails(s.broker.purge("q", { max: -1 }), InvalidArgumentError, "invalid_argument");
      await fails(s.broker.purge("q", { olderThanMs: -1 }), InvalidArgumentError, "invalid_argument");
      await fails(s.broker.purge("nope"), NotFoundError, "not_found");
      assert.deepEqual(await snapshot(s.broker, "q"), before);
    });
  });
});
