import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import {
  InvalidArgumentError,
  LockLostError,
  MessageTooLargeError,
  NotFoundError,
} from "../../../src/contract/errors.js";
import type { OutgoingMessage, QueueConfig } from "../../../src/contract/types.js";
import { fails, type Locked, snapshotAll } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

const MiB = 1024 * 1024;

cases((factory) => {
  describe("bad input leaves stored data unchanged", () => {
    let s: Subject;
    /** A locked message (its lease live), a deferred one (with its old token) and a scheduled one. */
    let locked: Locked;
    let deferred: Locked;
    let scheduled: number;
    let before: unknown;

    beforeEach(async () => {
      s = await factory({ maxMessageBytes: 1024 });
      await s.broker.createQueue("q", { lockDurationMs: 60_000, maxDeliveryCount: 5 });
      await s.broker.subscribe("t", "sub");
      await s.broker.send("q", [{ body: "locked" }, { body: "deferred" }, { body: "active" }]);
      const [l, d] = (await s.broker.receive("q", { maxMessages: 2 })) as Locked[];
      locked = l!;
      deferred = d!;
      await s.broker.defer("q", deferred.seqNumber, deferred.lockToken);
      [scheduled] = (await s.broker.schedule("q", { body: "scheduled" }, s.clock.now() + 60_000)) as [number];
      await s.broker.send("t", { body: "copy" });
      before = await snapshotAll(s.broker);
    });
    afterEach(async () => {
      try {
        assert.deepEqual(await snapshotAll(s.broker), before, "stored data is unchanged");
      } finally {
        await s.close();
      }
    });

    it("an unknown queue: not_found where the queue is looked up", async () => {
      const b = s.broker;
      await fails(b.send("nope", { body: "x" }), NotFoundError, "not_found");
      await fails(b.schedule("nope", { body: "x" }, s.clock.now() + 1000), NotFoundError, "not_found");
      await fails(b.receive("nope"), NotFoundError, "not_found");
      await fails(b.receiveDeferred("nope", [deferred.seqNumber]), NotFoundError, "not_found");
      await fails(b.renew("nope", locked.seqNumber, locked.lockToken), NotFoundError, "not_found");
      await fails(
        b.renewBatch("nope", [{ seqNumber: locked.seqNumber, lockToken: locked.lockToken }]),
        NotFoundError,
        "not_found",
      );
      await fails(b.stats("nope"), NotFoundError, "not_found");
      await fails(b.redrive("nope"), NotFoundError, "not_found");
      await fails(b.purge("nope"), NotFoundError, "not_found");
      await fails(b.cancel("nope", scheduled), NotFoundError, "not_found");
      await fails(b.deleteQueue("nope"), NotFoundError, "not_found");
      await fails(b.unsubscribe("t", "nope"), NotFoundError, "not_found");
      await fails(b.unsubscribe("nope", "sub"), NotFoundError, "not_found");
      await fails(b.pauseSubscription("t", "nope"), NotFoundError, "not_found");
      await fails(b.resumeSubscription("nope", "sub"), NotFoundError, "not_found");
    });

    it("an unknown queue: settlement is lock_lost, batch completion is ok:false, peek is empty", async () => {
      const b = s.broker;
      await fails(b.complete("nope", locked.seqNumber, locked.lockToken), LockLostError, "lock_lost");
      await fails(b.abandon("nope", locked.seqNumber, locked.lockToken), LockLostError, "lock_lost");
      await fails(b.reject("nope", locked.seqNumber, locked.lockToken), LockLostError, "lock_lost");
      await fails(b.defer("nope", locked.seqNumber, locked.lockToken), LockLostError, "lock_lost");
      assert.deepEqual(
        await b.completeBatch("nope", [{ seqNumber: locked.seqNumber, lockToken: locked.lockToken }]),
        [{ seqNumber: locked.seqNumber, ok: false }],
      );
      assert.deepEqual(await b.peek("nope"), []);
    });

    it("an empty send is a no-op, even for an unknown queue", async () => {
      assert.deepEqual(await s.broker.send("q", []), []);
      assert.deepEqual(await s.broker.send("nope", []), []);
    });

    it("negative durations are invalid_argument (a negative ttl or delay is a deliberate difference)", async () => {
      const b = s.broker;
      await fails(b.send("q", { body: "x" }, { ttlMs: -1 }), InvalidArgumentError, "invalid_argument");
      await fails(
        b.abandon("q", locked.seqNumber, locked.lockToken, { delayMs: -1 }),
        InvalidArgumentError,
        "invalid_argument",
      );
      await fails(b.redrive("q", { olderThanMs: -1 }), InvalidArgumentError, "invalid_argument");
      await fails(b.purge("q", { olderThanMs: -1 }), InvalidArgumentError, "invalid_argument");
      await fails(b.send("q", { body: "x" }, { scheduledAt: -1 }), InvalidArgumentError, "invalid_argument");
    });

    it("absurd durations (beyond ten years) are invalid_argument", async () => {
      const b = s.broker;
      const absurd = 1e15;
      await fails(b.send("q", { body: "x" }, { ttlMs: absurd }), InvalidArgumentError, "invalid_argument");
      await fails(
        b.abandon("q", locked.seqNumber, locked.lockToken, { delayMs: absurd }),
        InvalidArgumentError,
        "invalid_argument",
      );
      await fails(b.redrive("q", { olderThanMs: absurd }), InvalidArgumentError, "invalid_argument");
      await fails(b.purge("q", { olderThanMs: absurd }), InvalidArgumentError, "invalid_argument");
      for (const config of [
        { lockDurationMs: absurd },
        { defaultTtlMs: absurd },
        { dedupWindowMs: absurd },
      ] as QueueConfig[]) {
        await fails(b.createQueue("q", config), InvalidArgumentError, "invalid_argument");
        await fails(b.createQueue("fresh", config), InvalidArgumentError, "invalid_argument");
      }
    });

    it("non-integer numbers are invalid_argument", async () => {
      const b = s.broker;
      for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await fails(b.send("q", { body: "x" }, { ttlMs: bad }), InvalidArgumentError, "invalid_argument");
        await fails(
          b.send("q", { body: "x" }, { scheduledAt: bad }),
          InvalidArgumentError,
          "invalid_argument",
        );
        await fails(
          b.abandon("q", locked.seqNumber, locked.lockToken, { delayMs: bad }),
          InvalidArgumentError,
          "invalid_argument",
        );
        await fails(b.createQueue("q", { lockDurationMs: bad }), InvalidArgumentError, "invalid_argument");
        await fails(b.createQueue("q", { maxDeliveryCount: bad }), InvalidArgumentError, "invalid_argument");
        await fails(b.purge("q", { max: bad }), InvalidArgumentError, "invalid_argument");
        await fails(b.redrive("q", { max: bad }), InvalidArgumentError, "invalid_argument");
        await fails(b.complete("q", bad, locked.lockToken), InvalidArgumentError, "invalid_argument");
        await fails(b.cancel("q", bad), InvalidArgumentError, "invalid_argument");
      }
    });

    it("malformed values are invalid_argument", async () => {
      const b = s.broker;
      await fails(
        b.send("q", { body: "x", properties: { n: 1 } } as unknown as OutgoingMessage),
        InvalidArgumentError,
        "invalid_argument",
      );
      await fails(
        b.send("q", [{ body: "x" }, null] as unknown as OutgoingMessage[]),
        InvalidArgumentError,
        "invalid_argument",
      );
      await fails(
        b.send("q", { body: 42 } as unknown as OutgoingMessage),
        InvalidArgumentError,
        "invalid_argument",
      );
      await fails(
        b.createQueue("q", { deadLetterOnExpire: "yes" } as unknown as QueueConfig),
        InvalidArgumentError,
        "invalid_argument",
      );
    });

    it("a body over the cap is message_too_large, checked before the queue and for the whole request", async () => {
      const b = s.broker;
      await fails(b.send("q", { body: Buffer.alloc(1025) }), MessageTooLargeError, "message_too_large");
      await fails(b.send("q", { body: "é".repeat(513) }), MessageTooLargeError, "message_too_large");
      await fails(b.send("nope", { body: Buffer.alloc(1025) }), MessageTooLargeError, "message_too_large");
      await fails(
        b.send("q", [{ body: "fine" }, { body: Buffer.alloc(1025) }]),
        MessageTooLargeError,
        "message_too_large",
      );
      await fails(b.send("t", { body: Buffer.alloc(1025) }), MessageTooLargeError, "message_too_large");
      await fails(
        b.schedule("q", { body: Buffer.alloc(1025) }, s.clock.now() + 1000),
        MessageTooLargeError,
        "message_too_large",
      );
    });

    it("a wrong, empty or stale token, or the wrong state, is lock_lost", async () => {
      const b = s.broker;
      const wrong = "0123456789abcdef0123456789abcdef";
      for (const [seq, token] of [
        [locked.seqNumber, wrong],
        [locked.seqNumber, ""],
        [locked.seqNumber, deferred.lockToken],
        [deferred.seqNumber, deferred.lockToken],
        [scheduled, locked.lockToken],
      ] as [number, string][]) {
        await fails(b.complete("q", seq, token), LockLostError, "lock_lost");
        await fails(b.abandon("q", seq, token), LockLostError, "lock_lost");
        await fails(b.reject("q", seq, token), LockLostError, "lock_lost");
        if (seq === deferred.seqNumber && token === deferred.lockToken) {
          await b.defer("q", seq, token); // the exact replay of the deferral: ok, and no change
        } else {
          await fails(b.defer("q", seq, token), LockLostError, "lock_lost");
        }
        await fails(b.renew("q", seq, token), LockLostError, "lock_lost");
      }
    });

    it("the wrong state: cancel of a non-scheduled message is not_found; receiveDeferred skips it", async () => {
      await fails(s.broker.cancel("q", locked.seqNumber), NotFoundError, "not_found");
      await fails(s.broker.cancel("q", deferred.seqNumber), NotFoundError, "not_found");
      assert.deepEqual(await s.broker.receiveDeferred("q", [locked.seqNumber, scheduled]), []);
    });

    it("malformed names are invalid_argument for every create", async () => {
      const b = s.broker;
      for (const name of ["", "   ", "a\u0000b", "tab\there", "line\nbreak", "del\u007f", "x".repeat(257)]) {
        await fails(b.createQueue(name), InvalidArgumentError, "invalid_argument");
        await fails(b.subscribe(name, "fresh-sub"), InvalidArgumentError, "invalid_argument");
        await fails(b.subscribe("fresh-topic", name), InvalidArgumentError, "invalid_argument");
      }
    });

    it("a malformed name is never found where a name is looked up", async () => {
      for (const name of ["", "a\u0000b", "x".repeat(257)]) {
        await fails(s.broker.send(name, { body: "x" }), NotFoundError, "not_found");
        await fails(s.broker.receive(name), NotFoundError, "not_found");
        await fails(s.broker.stats(name), NotFoundError, "not_found");
      }
    });
  });

  describe("message size limits", () => {
    let s: Subject;
    afterEach(() => s.close());

    it("1.11 the default cap is 1 MiB: exactly the cap is stored, one byte more is message_too_large", async () => {
      s = await factory();
      await s.broker.createQueue("q");
      const [seq] = await s.broker.send("q", { body: Buffer.alloc(MiB, 1) });
      await fails(
        s.broker.send("q", { body: Buffer.alloc(MiB + 1) }),
        MessageTooLargeError,
        "message_too_large",
      );
      const peeked = await s.broker.peek("q");
      assert.equal(peeked.length, 1);
      assert.equal(peeked[0]?.seqNumber, seq);
      assert.equal(peeked[0]?.body.length, MiB);
    });

    it("1.11 a configured cap: exactly the cap is stored, one byte more is message_too_large", async () => {
      s = await factory({ maxMessageBytes: 100 });
      await s.broker.createQueue("q");
      await s.broker.send("q", { body: "x".repeat(100) });
      await fails(s.broker.send("q", { body: "x".repeat(101) }), MessageTooLargeError, "message_too_large");
      assert.equal((await s.broker.stats("q")).total, 1);
    });

    it("names of exactly 256 characters are fine", async () => {
      s = await factory();
      const name = "n".repeat(256);
      await s.broker.createQueue(name);
      await s.broker.subscribe("t".repeat(256), "s".repeat(256));
      await s.broker.send(name, { body: "x" });
      assert.equal((await s.broker.stats(name)).active, 1);
    });
  });
});
