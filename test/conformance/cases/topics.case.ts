import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import {
  AlreadyExistsError,
  GroupRequiredError,
  InvalidArgumentError,
  LockLostError,
  NameConflictError,
  NotFoundError,
} from "../../../src/contract/errors.js";
import { bodies, fails, receiveOne, seqs, snapshotAll } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

cases((factory) => {
  describe("§12 topics & naming", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("plain");
      await s.broker.subscribe("events", "audit");
      await s.broker.subscribe("other-topic", "billing");
      await s.broker.send("plain", { body: "p" });
      await s.broker.send("events", { body: "e" });
    });
    afterEach(() => s.close());

    /** Asserts that `p` is a name conflict and that nothing at all changed. */
    async function conflict(p: () => Promise<unknown>): Promise<void> {
      const before = await snapshotAll(s.broker);
      await fails(p(), NameConflictError, "name_conflict");
      assert.deepEqual(await snapshotAll(s.broker), before, "a failed create leaves nothing behind");
    }

    it("12.1 CreateQueue refuses a live topic's name", async () => {
      await conflict(() => s.broker.createQueue("events"));
      await conflict(() => s.broker.createQueue("events", { kind: "subscription" }));
    });

    it("12.1 CreateQueue refuses a cross-kind upsert in both directions", async () => {
      await conflict(() => s.broker.createQueue("audit"));
      await conflict(() => s.broker.createQueue("audit", { kind: "queue", lockDurationMs: 5 }));
      await conflict(() => s.broker.createQueue("plain", { kind: "subscription" }));
    });

    it("12.1 Subscribe refuses a topic that names an existing queue or subscription", async () => {
      await conflict(() => s.broker.subscribe("plain", "fresh"));
      await conflict(() => s.broker.subscribe("audit", "fresh"));
    });

    it("12.1 Subscribe refuses a name that is a plain queue, another topic's subscription, or a live topic", async () => {
      await conflict(() => s.broker.subscribe("events", "plain"));
      await conflict(() => s.broker.subscribe("events", "billing"));
      await conflict(() => s.broker.subscribe("new-topic", "audit"));
      await conflict(() => s.broker.subscribe("new-topic", "events"));
    });

    it("12.1 Subscribe refuses topic == name", async () => {
      await conflict(() => s.broker.subscribe("same", "same"));
      await conflict(() => s.broker.subscribe("events", "events"));
    });

    it("12.1 topic == name is a conflict before the filter is even compiled", async () => {
      await conflict(() => s.broker.subscribe("same", "same", { filter: "subject ==" }));
    });

    it("12.1 a subscribe with a bad backing-queue config stores nothing", async () => {
      const before = await snapshotAll(s.broker);
      await fails(
        s.broker.subscribe("new-topic", "fresh", { config: { orderingMode: "lifo" as "strict_fifo" } }),
        InvalidArgumentError,
        "invalid_argument",
      );
      await fails(
        s.broker.subscribe("new-topic", "fresh", { config: { lockDurationMs: 1.5 } }),
        InvalidArgumentError,
        "invalid_argument",
      );
      assert.deepEqual(await snapshotAll(s.broker), before);
    });

    it("12.1 a same-kind upsert and an identical re-subscribe are allowed", async () => {
      await s.broker.createQueue("plain", { lockDurationMs: 5000 });
      await s.broker.createQueue("audit", { kind: "subscription", lockDurationMs: 6000 });
      await s.broker.subscribe("events", "audit");
      const queues = await s.broker.listQueues();
      assert.deepEqual(
        queues.map((q) => [q.name, q.kind, q.lockDurationMs]),
        [
          ["audit", "subscription", 6000],
          ["billing", "subscription", 30_000],
          ["plain", "queue", 5000],
        ],
      );
      assert.deepEqual(bodies(await s.broker.peek("audit")), ["e"], "the backing queue keeps its messages");
      assert.deepEqual(bodies(await s.broker.peek("plain")), ["p"]);
    });

    it("12.1 once a topic's last subscription is gone its name is free", async () => {
      await s.broker.unsubscribe("events", "audit");
      await s.broker.createQueue("events");
      await s.broker.createQueue("audit");
      assert.deepEqual(
        (await s.broker.listQueues()).map((q) => [q.name, q.kind]),
        [
          ["audit", "queue"],
          ["billing", "subscription"],
          ["events", "queue"],
          ["plain", "queue"],
        ],
      );
    });

    it("12.2 send resolves a topic first, then a queue (a backing queue too), else not_found", async () => {
      const [toTopic] = await s.broker.send("events", { body: "t" });
      assert.deepEqual(seqs((await s.broker.peek("audit")).slice(1)), [toTopic]);
      const [direct] = await s.broker.send("audit", { body: "direct" });
      assert.deepEqual(bodies(await s.broker.peek("audit")), ["e", "t", "direct"]);
      assert.ok(direct! > toTopic!);
      await s.broker.send("plain", { body: "q" });
      assert.deepEqual(bodies(await s.broker.peek("plain")), ["p", "q"]);
      await fails(s.broker.send("nowhere", { body: "x" }), NotFoundError, "not_found");
    });
  });

  describe("topics and filtered subscriptions", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
    });
    afterEach(() => s.close());

    it("fan-out copies a message into every subscription: same message_id, a distinct seq each", async () => {
      await s.broker.subscribe("orders", "billing");
      await s.broker.subscribe("orders", "audit");
      const [slot] = await s.broker.send("orders", {
        body: "o1",
        messageId: "order-1",
        subject: "orders.eu",
        properties: { tier: "gold" },
      });
      const [a] = await s.broker.peek("audit");
      const [b] = await s.broker.peek("billing");
      assert.equal(a?.messageId, "order-1");
      assert.equal(b?.messageId, "order-1");
      assert.notEqual(a?.seqNumber, b?.seqNumber);
      assert.deepEqual(
        [a?.body.toString(), a?.subject, a?.properties],
        ["o1", "orders.eu", { tier: "gold" }],
      );
      assert.deepEqual(
        [b?.body.toString(), b?.subject, b?.properties],
        ["o1", "orders.eu", { tier: "gold" }],
      );
      assert.equal(slot, b?.seqNumber, "the slot is the last accepting target's seq, by subscription name");
    });

    it("fan-out copies are settled separately, each with its own seq and token", async () => {
      await s.broker.subscribe("orders", "a");
      await s.broker.subscribe("orders", "b");
      await s.broker.send("orders", { body: "x" });
      const ma = await receiveOne(s.broker, "a");
      const mb = await receiveOne(s.broker, "b");
      await fails(s.broker.complete("b", ma.seqNumber, ma.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.complete("a", mb.seqNumber, ma.lockToken), LockLostError, "lock_lost");
      await s.broker.complete("a", ma.seqNumber, ma.lockToken);
      assert.equal((await s.broker.stats("a")).total, 0);
      assert.equal((await s.broker.stats("b")).locked, 1, "the other copy is untouched");
      await s.broker.reject("b", mb.seqNumber, mb.lockToken);
      assert.equal((await s.broker.stats("b")).deadLettered, 1, "each backing queue has its own DLQ");
    });

    it("a publish that no subscription accepts is [0] (a no-op, not an error)", async () => {
      await s.broker.subscribe("t", "s1", { filter: 'subject == "wanted"' });
      await s.broker.subscribe("t", "s2", { filter: "false" });
      const before = await snapshotAll(s.broker);
      assert.deepEqual(await s.broker.send("t", { body: "x", subject: "other" }), [0]);
      assert.deepEqual(await s.broker.send("t", [{ body: "x" }, { body: "y" }]), [0, 0]);
      assert.deepEqual(await snapshotAll(s.broker), before);
      const [dropped, routed] = await s.broker.send("t", [
        { body: "z", subject: "other" },
        { body: "w", subject: "wanted" },
      ]);
      assert.equal(dropped, 0);
      assert.deepEqual(seqs(await s.broker.peek("s1")), [routed]);
    });

    it("a multi-message publish routes each message on its own", async () => {
      await s.broker.subscribe("t", "a", { filter: 'subject == "a"' });
      await s.broker.subscribe("t", "b", { filter: 'subject == "b"' });
      const res = await s.broker.send("t", [
        { body: "1", subject: "a" },
        { body: "2", subject: "b" },
        { body: "3", subject: "c" },
      ]);
      assert.equal(res[2], 0);
      assert.deepEqual(seqs(await s.broker.peek("a")), [res[0]]);
      assert.deepEqual(seqs(await s.broker.peek("b")), [res[1]]);
    });

    for (const [plain, grouped] of [
      ["a-plain", "b-grouped"],
      ["b-plain", "a-grouped"],
    ]) {
      it(`fan-out is atomic: a failing target leaves no copy anywhere (${plain} / ${grouped})`, async () => {
        await s.broker.subscribe("t", plain!);
        await s.broker.subscribe("t", grouped!, { config: { orderingMode: "group_fifo" } });
        const before = await snapshotAll(s.broker);
        await fails(s.broker.send("t", { body: "no group" }), GroupRequiredError, "group_required");
        await fails(
          s.broker.send("t", [{ body: "fine", groupId: "g" }, { body: "no group" }]),
          GroupRequiredError,
          "group_required",
        );
        await fails(
          s.broker.schedule("t", { body: "no group" }, s.clock.now() + 1000),
          GroupRequiredError,
          "group_required",
        );
        assert.deepEqual(await snapshotAll(s.broker), before);
        const [seq] = await s.broker.send("t", { body: "grouped", groupId: "g" });
        assert.ok(seq! > 0);
        assert.equal((await s.broker.stats(plain!)).active, 1);
        assert.equal((await s.broker.stats(grouped!)).active, 1);
      });
    }

    it("only accepting targets are checked: a filtered-out or paused group_fifo target needs no group", async () => {
      await s.broker.subscribe("t", "plain");
      await s.broker.subscribe("t", "grouped", { filter: "false", config: { orderingMode: "group_fifo" } });
      assert.ok((await s.broker.send("t", { body: "x" }))[0]! > 0);
      await s.broker.subscribe("t", "grouped");
      await s.broker.pauseSubscription("t", "grouped");
      assert.ok((await s.broker.send("t", { body: "y" }))[0]! > 0);
      assert.equal((await s.broker.stats("grouped")).total, 0);
    });

    it("a paused subscription receives no copies until resumed", async () => {
      await s.broker.subscribe("t", "a");
      await s.broker.subscribe("t", "b");
      await s.broker.send("t", { body: "1" });
      await s.broker.pauseSubscription("t", "b");
      assert.deepEqual(
        (await s.broker.listSubscriptions()).map((x) => [x.name, x.paused]),
        [
          ["a", false],
          ["b", true],
        ],
      );
      await s.broker.send("t", { body: "2" });
      await s.broker.pauseSubscription("t", "a");
      assert.deepEqual(await s.broker.send("t", { body: "3" }), [0], "all paused: still a topic, no copy");
      await s.broker.resumeSubscription("t", "b");
      await s.broker.resumeSubscription("t", "a");
      await s.broker.send("t", { body: "4" });
      assert.deepEqual(bodies(await s.broker.peek("a")), ["1", "2", "4"]);
      assert.deepEqual(bodies(await s.broker.peek("b")), ["1", "4"]);
      assert.ok((await s.broker.listSubscriptions()).every((x) => !x.paused));
    });

    it("pause and resume of an unknown subscription are not_found", async () => {
      await s.broker.subscribe("t", "a");
      await fails(s.broker.pauseSubscription("t", "nope"), NotFoundError, "not_found");
      await fails(s.broker.resumeSubscription("nope", "a"), NotFoundError, "not_found");
    });

    it("unsubscribe removes the subscription and its backing queue with its messages", async () => {
      await s.broker.subscribe("t", "a", { config: { dedupWindowMs: 60_000 } });
      await s.broker.subscribe("t", "b");
      await s.broker.send("t", { body: "x", messageId: "k" });
      await s.broker.unsubscribe("t", "a");
      assert.deepEqual(
        (await s.broker.listSubscriptions()).map((x) => x.name),
        ["b"],
      );
      assert.deepEqual(
        (await s.broker.listQueues()).map((q) => q.name),
        ["b"],
      );
      await fails(s.broker.stats("a"), NotFoundError, "not_found");
      assert.deepEqual(await s.broker.peek("a"), []);
      await s.broker.subscribe("t", "a", { config: { dedupWindowMs: 60_000 } });
      assert.equal((await s.broker.stats("a")).total, 0, "a re-created subscription starts empty");
      await s.broker.send("t", { body: "other body", messageId: "k" });
      assert.equal((await s.broker.stats("a")).total, 1, "its old dedup keys are gone");
      await fails(s.broker.unsubscribe("t", "nope"), NotFoundError, "not_found");
      await fails(s.broker.unsubscribe("other", "a"), NotFoundError, "not_found");
    });

    it("unsubscribing the last subscription ends the topic", async () => {
      await s.broker.subscribe("t", "a");
      await s.broker.unsubscribe("t", "a");
      await fails(s.broker.send("t", { body: "x" }), NotFoundError, "not_found");
      assert.deepEqual(await s.broker.listSubscriptions(), []);
      assert.deepEqual(await s.broker.listQueues(), []);
    });

    it("re-subscribing replaces the filter and keeps the backing queue, its config and its messages", async () => {
      await s.broker.subscribe("t", "s", { filter: 'subject == "a"', config: { lockDurationMs: 4321 } });
      await s.broker.send("t", [
        { body: "a1", subject: "a" },
        { body: "b1", subject: "b" },
      ]);
      await s.broker.subscribe("t", "s", { filter: 'subject == "b"', config: { lockDurationMs: 1 } });
      await s.broker.send("t", [
        { body: "a2", subject: "a" },
        { body: "b2", subject: "b" },
      ]);
      assert.deepEqual(bodies(await s.broker.peek("s")), ["a1", "b2"]);
      assert.equal((await s.broker.listQueues())[0]?.lockDurationMs, 4321);
      const [info] = await s.broker.listSubscriptions();
      assert.equal(info?.filter, 'subject == "b"');
      await s.broker.subscribe("t", "s");
      await s.broker.send("t", { body: "any", subject: "z" });
      assert.deepEqual(bodies(await s.broker.peek("s")), ["a1", "b2", "any"]);
      assert.equal((await s.broker.listSubscriptions())[0]?.filter, undefined);
    });

    it("re-subscribing with the seed's filter language replaces the filter", async () => {
      await s.broker.subscribe("t", "s", { filter: 'properties["tier"] == "gold"' });
      await s.broker.send("t", [
        { body: "gold", properties: { tier: "gold" } },
        { body: "silver", properties: { tier: "silver" } },
      ]);
      await s.broker.subscribe("t", "s", {
        filter: 'subject_parts[0] == "orders" && properties["tier"] == "silver"',
      });
      await s.broker.send("t", [
        { body: "gold-order", subject: "orders.eu", properties: { tier: "gold" } },
        { body: "silver-order", subject: "orders.eu", properties: { tier: "silver" } },
        { body: "silver-refund", subject: "refunds.eu", properties: { tier: "silver" } },
      ]);
      assert.deepEqual(bodies(await s.broker.peek("s")), ["gold", "silver-order"]);
    });

    it("subscribe creates the backing queue with the given config", async () => {
      await s.broker.subscribe("t", "s", { config: { lockDurationMs: 2500, maxDeliveryCount: 3 } });
      const [q] = await s.broker.listQueues();
      assert.deepEqual(
        [q?.name, q?.kind, q?.lockDurationMs, q?.maxDeliveryCount],
        ["s", "subscription", 2500, 3],
      );
    });

    it("listSubscriptions is ordered by topic then name and describes each", async () => {
      s.clock.set(Date.UTC(2026, 2, 1));
      await s.broker.subscribe("t2", "z");
      await s.broker.subscribe("t1", "y", { filter: 'subject == "x"' });
      await s.broker.subscribe("t2", "a", { filter: "   " });
      assert.deepEqual(await s.broker.listSubscriptions(), [
        {
          topic: "t1",
          name: "y",
          kind: "queue",
          filter: 'subject == "x"',
          paused: false,
          createdAt: s.clock.now(),
        },
        { topic: "t2", name: "a", kind: "queue", paused: false, createdAt: s.clock.now() },
        { topic: "t2", name: "z", kind: "queue", paused: false, createdAt: s.clock.now() },
      ]);
    });

    it("dedup applies per backing queue", async () => {
      await s.broker.subscribe("t", "a", { config: { dedupWindowMs: 60_000 } });
      await s.broker.subscribe("t", "b");
      const [first] = await s.broker.send("t", { body: "x", messageId: "k" });
      const [again] = await s.broker.send("t", { body: "x", messageId: "k" });
      assert.ok(again! > first!, "b (no window) took a new copy and is the last accepting target");
      assert.equal((await s.broker.stats("a")).total, 1);
      assert.equal((await s.broker.stats("b")).total, 2);
      const [conflict] = await s.broker.send("t", { body: "other", messageId: "k" });
      assert.ok(conflict! > 0, "a conflict in one target is no error while another accepts");
      assert.equal((await s.broker.stats("a")).total, 1);
    });

    it("dedup on a topic: a duplicate in every target returns the original seq; a conflict in every one is already_exists", async () => {
      await s.broker.subscribe("t", "a", { config: { dedupWindowMs: 60_000 } });
      await s.broker.subscribe("t", "b", { config: { dedupWindowMs: 60_000 } });
      const [first] = await s.broker.send("t", { body: "x", messageId: "k" });
      assert.deepEqual(await s.broker.send("t", { body: "x", messageId: "k" }), [first]);
      const before = await snapshotAll(s.broker);
      await fails(s.broker.send("t", { body: "y", messageId: "k" }), AlreadyExistsError, "already_exists");
      assert.deepEqual(await snapshotAll(s.broker), before);
      const [conflict, fresh] = await s.broker.send("t", [{ body: "y", messageId: "k" }, { body: "z" }]);
      assert.equal(conflict, 0, "in a multi-message publish the conflicting slot is 0");
      assert.ok(fresh! > first!);
      assert.deepEqual(bodies(await s.broker.peek("a")), ["x", "z"]);
      assert.deepEqual(bodies(await s.broker.peek("b")), ["x", "z"]);
    });

    it("a scheduled publish schedules a copy in each subscription", async () => {
      await s.broker.subscribe("t", "a");
      await s.broker.subscribe("t", "b");
      const at = s.clock.now() + 1000;
      await s.broker.schedule("t", { body: "later" }, at, { ttlMs: 500 });
      for (const q of ["a", "b"]) {
        const [m] = await s.broker.peek(q);
        assert.deepEqual([m?.state, m?.visibleAt, m?.expiresAt], ["scheduled", at, at + 500]);
      }
    });
  });

  describe("seed 000 §3 questions", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
    });
    afterEach(() => s.close());

    it("Q1 fan-out to two subscriptions: the message_id is the same, the seq_numbers differ", async () => {
      await s.broker.subscribe("events", "audit");
      await s.broker.subscribe("events", "billing");
      await s.broker.send("events", { body: "x", messageId: "same-id" });
      const [a] = await s.broker.peek("audit");
      const [b] = await s.broker.peek("billing");
      assert.equal(a?.messageId, "same-id");
      assert.equal(b?.messageId, "same-id");
      assert.notEqual(a?.seqNumber, b?.seqNumber);
    });

    it("Q2 a new filtered subscription receives no historical messages", async () => {
      await s.broker.subscribe("events", "audit");
      await s.broker.send("events", { body: "before", subject: "match" });
      await s.broker.subscribe("events", "late", { filter: 'subject == "match"' });
      assert.deepEqual(await s.broker.peek("late"), []);
      await s.broker.send("events", { body: "after", subject: "match" });
      assert.deepEqual(bodies(await s.broker.peek("late")), ["after"]);
    });

    it("Q3 subscriptions exist but none match: the message is dropped silently", async () => {
      await s.broker.subscribe("events", "audit", { filter: 'subject == "x"' });
      assert.deepEqual(await s.broker.send("events", { body: "y", subject: "y" }), [0]);
      assert.equal((await s.broker.stats("audit")).total, 0);
    });

    it("Q3 no subscription names the target: it must be an existing queue, else an error", async () => {
      await fails(s.broker.send("events", { body: "x" }), NotFoundError, "not_found");
      await s.broker.createQueue("events");
      const [seq] = await s.broker.send("events", { body: "x" });
      assert.deepEqual(seqs(await s.broker.peek("events")), [seq]);
    });
  });

  describe("seed 000 §5 speedbumps", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
    });
    afterEach(() => s.close());

    it("S1 a topic is not an inbox: what is published before a subscription exists is not kept", async () => {
      await s.broker.subscribe("events", "first");
      await s.broker.unsubscribe("events", "first");
      await fails(s.broker.send("events", { body: "lost" }), NotFoundError, "not_found");
      await s.broker.subscribe("events", "audit");
      await s.broker.send("events", { body: "kept" });
      assert.deepEqual(bodies(await s.broker.peek("audit")), ["kept"]);
    });

    it("S2 fan-out copies do not share a seq_number: settle each separately", async () => {
      await s.broker.subscribe("events", "a");
      await s.broker.subscribe("events", "b");
      await s.broker.send("events", { body: "x" });
      const ma = await receiveOne(s.broker, "a");
      const mb = await receiveOne(s.broker, "b");
      assert.notEqual(ma.seqNumber, mb.seqNumber);
      await s.broker.complete("a", ma.seqNumber, ma.lockToken);
      await fails(s.broker.complete("b", ma.seqNumber, ma.lockToken), LockLostError, "lock_lost");
      await s.broker.complete("b", mb.seqNumber, mb.lockToken);
    });

    it("S3 a new subscription does not back-fill history", async () => {
      await s.broker.subscribe("events", "a");
      await s.broker.send("events", [{ body: "1" }, { body: "2" }]);
      await s.broker.subscribe("events", "b");
      assert.equal((await s.broker.stats("b")).total, 0);
      assert.equal((await s.broker.stats("a")).total, 2);
    });

    it("S4 the DLQ is a state of the same (backing) queue, not a queue you create", async () => {
      await s.broker.subscribe("events", "a");
      await s.broker.send("events", { body: "x" });
      const m = await receiveOne(s.broker, "a");
      await s.broker.reject("a", m.seqNumber, m.lockToken);
      const [dead] = await s.broker.peek("a", { state: "dead_lettered" });
      assert.equal(dead?.seqNumber, m.seqNumber);
      assert.equal((await s.broker.stats("a")).deadLettered, 1);
      assert.deepEqual(
        (await s.broker.listQueues()).map((q) => q.name),
        ["a"],
      );
    });

    it("S5 publishing to a zero-subscription topic name looks for a same-named queue, or errors", async () => {
      await fails(s.broker.send("events", { body: "x" }), NotFoundError, "not_found");
      await s.broker.createQueue("events");
      await s.broker.send("events", { body: "x" });
      assert.equal((await s.broker.stats("events")).active, 1);
      await fails(s.broker.subscribe("events", "audit"), NameConflictError, "name_conflict");
    });
  });
});
