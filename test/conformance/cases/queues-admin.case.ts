import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { InvalidArgumentError, NameConflictError, NotFoundError } from "../../../src/contract/errors.js";
import type { OrderingMode, QueueConfig, QueueKind, QueueStats } from "../../../src/contract/types.js";
import { deadLetter, fails, receiveOne, seqs, snapshotAll } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

const DEFAULTS = {
  kind: "queue",
  lockDurationMs: 30_000,
  maxDeliveryCount: 10,
  defaultTtlMs: 0,
  deadLetterOnExpire: true,
  dedupWindowMs: 0,
  orderingMode: "standard",
  dlqMaxAgeMs: 0,
  dlqMaxCount: 0,
  dlqMaxBytes: 0,
};

/** The fields of the original's Stats (every one always present); extensions may add more. */
function stockStats(st: QueueStats): Record<string, unknown> {
  const keys = [
    "queue",
    "active",
    "locked",
    "deferred",
    "scheduled",
    "deadLettered",
    "total",
    "oldestMessageAgeMs",
  ];
  for (const k of keys) assert.ok(k in st, `${k} is always present`);
  return Object.fromEntries(keys.map((k) => [k, st[k as keyof QueueStats]]));
}

cases((factory) => {
  describe("§1.9 queues: CreateQueue, ListQueues, Stats, DeleteQueue", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
    });
    afterEach(() => s.close());

    it("CreateQueue without a config takes every default", async () => {
      await s.broker.createQueue("q");
      assert.deepEqual(await s.broker.listQueues(), [{ name: "q", ...DEFAULTS }]);
    });

    it("CreateQueue normalises: <=0 lock and max delivery take their defaults, a negative TTL is none", async () => {
      await s.broker.createQueue("q", {
        lockDurationMs: -1,
        maxDeliveryCount: 0,
        defaultTtlMs: -5,
        dedupWindowMs: -5,
      });
      const [q] = await s.broker.listQueues();
      assert.deepEqual(
        [q?.lockDurationMs, q?.maxDeliveryCount, q?.defaultTtlMs, q?.dedupWindowMs],
        [30_000, 10, 0, 0],
      );
    });

    it("CreateQueue is an upsert that resets omitted fields to their defaults", async () => {
      const full: QueueConfig = {
        lockDurationMs: 5000,
        maxDeliveryCount: 3,
        defaultTtlMs: 60_000,
        deadLetterOnExpire: false,
        dedupWindowMs: 1000,
        orderingMode: "group_fifo",
        dlqMaxAgeMs: 1,
        dlqMaxCount: 2,
        dlqMaxBytes: 3,
      };
      await s.broker.createQueue("q", full);
      assert.deepEqual(await s.broker.listQueues(), [{ name: "q", kind: "queue", ...full }]);
      await s.broker.send("q", { body: "kept", groupId: "g" });
      await s.broker.createQueue("q", { maxDeliveryCount: 4 });
      assert.deepEqual(await s.broker.listQueues(), [{ name: "q", ...DEFAULTS, maxDeliveryCount: 4 }]);
      assert.equal((await s.broker.stats("q")).active, 1, "messages are kept");
      await s.broker.send("q", { body: "no group needed any more" });
    });

    it("CreateQueue applies the new config to later operations at once", async () => {
      await s.broker.createQueue("q", { lockDurationMs: 5000 });
      await s.broker.createQueue("q", { lockDurationMs: 7000 });
      await s.broker.send("q", { body: "x" });
      const m = await receiveOne(s.broker, "q");
      assert.equal(m.lockedUntil, s.clock.now() + 7000);
    });

    it("CreateQueue refuses an unknown kind or ordering mode, and an empty name", async () => {
      await s.broker.createQueue("q");
      const before = await snapshotAll(s.broker);
      await fails(
        s.broker.createQueue("x", { kind: "topic" as QueueKind }),
        InvalidArgumentError,
        "invalid_argument",
      );
      await fails(
        s.broker.createQueue("q", { orderingMode: "lifo" as OrderingMode }),
        InvalidArgumentError,
        "invalid_argument",
      );
      await fails(s.broker.createQueue(""), InvalidArgumentError, "invalid_argument");
      assert.deepEqual(await snapshotAll(s.broker), before);
    });

    it("CreateQueue of a subscription's backing queue: same kind reconfigures, plain kind conflicts", async () => {
      await s.broker.subscribe("t", "sub");
      await fails(s.broker.createQueue("sub"), NameConflictError, "name_conflict");
      await fails(s.broker.createQueue("sub", { kind: "queue" }), NameConflictError, "name_conflict");
      await s.broker.createQueue("sub", { kind: "subscription", lockDurationMs: 1234 });
      const [sub] = await s.broker.listQueues();
      assert.deepEqual([sub?.name, sub?.kind, sub?.lockDurationMs], ["sub", "subscription", 1234]);
    });

    it("CreateQueue of kind subscription without a subscription is refused and stores nothing", async () => {
      await fails(
        s.broker.createQueue("orphan", { kind: "subscription" }),
        InvalidArgumentError,
        "invalid_argument",
      );
      assert.deepEqual(await s.broker.listQueues(), []);
    });

    it("ListQueues is ordered by name and includes backing queues with their kind", async () => {
      await s.broker.createQueue("zeta");
      await s.broker.subscribe("events", "m-sub");
      await s.broker.createQueue("alpha");
      const list = await s.broker.listQueues();
      assert.deepEqual(
        list.map((q) => [q.name, q.kind]),
        [
          ["alpha", "queue"],
          ["m-sub", "subscription"],
          ["zeta", "queue"],
        ],
      );
    });

    it("Stats counts every state, the total, and the age of the oldest active or locked message", async () => {
      await s.broker.createQueue("q", { lockDurationMs: 60_000 });
      assert.deepEqual(stockStats(await s.broker.stats("q")), {
        queue: "q",
        active: 0,
        locked: 0,
        deferred: 0,
        scheduled: 0,
        deadLettered: 0,
        total: 0,
        oldestMessageAgeMs: 0,
      });
      await deadLetter(s.broker, "q", 1);
      s.clock.advance(1000);
      await s.broker.send("q", [{ body: "locked" }, { body: "deferred" }]);
      const [, d] = await s.broker.receive("q", { maxMessages: 2 });
      await s.broker.defer("q", d!.seqNumber, d!.lockToken!);
      s.clock.advance(1000);
      await s.broker.send("q", [{ body: "a1" }, { body: "a2" }]);
      await s.broker.schedule("q", { body: "s" }, s.clock.now() + 1000);
      s.clock.advance(500);
      assert.deepEqual(stockStats(await s.broker.stats("q")), {
        queue: "q",
        active: 2,
        locked: 1,
        deferred: 1,
        scheduled: 1,
        deadLettered: 1,
        total: 6,
        oldestMessageAgeMs: 1500,
      });
    });

    it("Stats ignores deferred, scheduled and dead-lettered messages for the oldest age", async () => {
      await s.broker.createQueue("q");
      await deadLetter(s.broker, "q", 1);
      await s.broker.schedule("q", { body: "s" }, s.clock.now() + 10_000);
      s.clock.advance(5000);
      assert.equal((await s.broker.stats("q")).oldestMessageAgeMs, 0);
    });

    it("Stats on an unknown queue is not_found", async () => {
      await fails(s.broker.stats("nope"), NotFoundError, "not_found");
    });

    it("DeleteQueue removes a plain queue with its messages and its dedup keys", async () => {
      await s.broker.createQueue("q", { dedupWindowMs: 60_000 });
      await s.broker.createQueue("other");
      await s.broker.send("q", [{ body: "a", messageId: "k" }, { body: "b" }]);
      await s.broker.deleteQueue("q");
      assert.deepEqual(
        (await s.broker.listQueues()).map((q) => q.name),
        ["other"],
      );
      await fails(s.broker.stats("q"), NotFoundError, "not_found");
      await fails(s.broker.send("q", { body: "x" }), NotFoundError, "not_found");
      await s.broker.createQueue("q", { dedupWindowMs: 60_000 });
      assert.equal((await s.broker.stats("q")).total, 0);
      const [seq] = await s.broker.send("q", { body: "new body", messageId: "k" });
      assert.ok(seq! > 0, "the old dedup key went with the queue");
    });

    it("DeleteQueue of a queue of many messages, in every state, deletes each of them (it goes in steps)", async () => {
      await s.broker.createQueue("q", { lockDurationMs: 60_000 });
      await s.broker.createQueue("other");
      await s.broker.send(
        "q",
        Array.from({ length: 1300 }, (_, i) => ({ body: `m${i}` })),
      );
      await s.broker.send("q", { body: "later" }, { scheduledAt: s.clock.now() + 60_000 });
      await s.broker.receive("q", { maxMessages: 100 });
      const [kept] = await s.broker.send("other", { body: "stays" });
      await s.broker.deleteQueue("q");
      await fails(s.broker.stats("q"), NotFoundError, "not_found");
      await s.broker.createQueue("q");
      assert.equal((await s.broker.stats("q")).total, 0);
      assert.deepEqual(await s.broker.peek("q", { max: 1000 }), []);
      assert.deepEqual(seqs(await s.broker.peek("other")), [kept]);
    });

    it("DeleteQueue refuses a backing queue (name_conflict) and an unknown queue (not_found)", async () => {
      await s.broker.subscribe("t", "sub");
      await s.broker.send("t", { body: "x" });
      const before = await snapshotAll(s.broker);
      await fails(s.broker.deleteQueue("sub"), NameConflictError, "name_conflict");
      await fails(s.broker.deleteQueue("nope"), NotFoundError, "not_found");
      assert.deepEqual(await snapshotAll(s.broker), before);
    });
  });
});
