import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, it } from "node:test";
import { LockLostError } from "../../../src/contract/errors.js";
import type { Message } from "../../../src/contract/types.js";
import { fails, receiveOne, seqs, snapshot } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

cases((factory) => {
  describe("§3 idempotency & at-least-once", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000, maxDeliveryCount: 3 });
    });
    afterEach(() => s.close());

    it("3.2 complete with another message's token is lock_lost", async () => {
      const [a, b] = await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      const [ma, mb] = await s.broker.receive("q", { maxMessages: 2 });
      await s.broker.complete("q", a!, ma!.lockToken!);
      await fails(s.broker.complete("q", b!, ma!.lockToken!), LockLostError, "lock_lost");
      assert.equal((await s.broker.peek("q"))[0]?.state, "locked");
      await s.broker.complete("q", b!, mb!.lockToken!);
    });

    it("3.2 abandon(T) then complete(T) is lock_lost", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.abandon("q", m.seqNumber, m.lockToken);
      await fails(s.broker.complete("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      assert.equal((await s.broker.peek("q"))[0]?.state, "active");
    });

    it("3.2 abandon(T, 5 s) then abandon(T, 60 s) is lock_lost; the identical repeat is ok", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.abandon("q", m.seqNumber, m.lockToken, { delayMs: 5000 });
      await fails(
        s.broker.abandon("q", m.seqNumber, m.lockToken, { delayMs: 60_000 }),
        LockLostError,
        "lock_lost",
      );
      await fails(s.broker.abandon("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      await s.broker.abandon("q", m.seqNumber, m.lockToken, { delayMs: 5000 });
      assert.equal((await s.broker.peek("q"))[0]?.visibleAt, s.clock.now() + 5000);
    });

    it("3.2 reject with a different reason or description is lock_lost; the identical repeat is ok", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.reject("q", m.seqNumber, m.lockToken, { reason: "Bad", description: "why" });
      await fails(
        s.broker.reject("q", m.seqNumber, m.lockToken, { reason: "Other", description: "why" }),
        LockLostError,
        "lock_lost",
      );
      await fails(
        s.broker.reject("q", m.seqNumber, m.lockToken, { reason: "Bad", description: "else" }),
        LockLostError,
        "lock_lost",
      );
      await fails(s.broker.reject("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      await s.broker.reject("q", m.seqNumber, m.lockToken, { reason: "Bad", description: "why" });
      const [dead] = await s.broker.peek("q");
      assert.equal(dead?.deadLetterReason, "Bad");
      assert.equal(dead?.deadLetterDescription, "why");
    });

    it("3.2 the reject receipt is taken after the default reason applies", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.reject("q", m.seqNumber, m.lockToken);
      await s.broker.reject("q", m.seqNumber, m.lockToken, { reason: "AppRequested" });
      await s.broker.reject("q", m.seqNumber, m.lockToken, { reason: "" });
    });

    it("3.2 an identical repeat of each verb is ok; another verb with the same token is lock_lost", async () => {
      const [a, b] = await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      const [ma, mb] = await s.broker.receive("q", { maxMessages: 2 });
      await s.broker.complete("q", a!, ma!.lockToken!);
      await s.broker.complete("q", a!, ma!.lockToken!);
      await fails(s.broker.defer("q", a!, ma!.lockToken!), LockLostError, "lock_lost");
      await fails(s.broker.abandon("q", a!, ma!.lockToken!), LockLostError, "lock_lost");
      await s.broker.defer("q", b!, mb!.lockToken!);
      await s.broker.defer("q", b!, mb!.lockToken!);
      await fails(s.broker.complete("q", b!, mb!.lockToken!), LockLostError, "lock_lost");
      await fails(s.broker.reject("q", b!, mb!.lockToken!), LockLostError, "lock_lost");
      assert.deepEqual(
        (await s.broker.peek("q")).map((m) => [m.seqNumber, m.state]),
        [[b, "deferred"]],
      );
    });

    it("3.2 a replay is tied to its queue", async () => {
      await s.broker.createQueue("other");
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.complete("q", m.seqNumber, m.lockToken);
      await fails(s.broker.complete("other", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
    });

    it("3.2 receipts live 30 minutes", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.complete("q", m.seqNumber, m.lockToken);
      s.clock.advance(30 * 60 * 1000 - 1);
      await s.maintain();
      await s.broker.complete("q", m.seqNumber, m.lockToken);
      s.clock.advance(1);
      await s.maintain();
      await fails(s.broker.complete("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
    });

    it("3.2 a kept completion answers its exact replay for 30 minutes, and only that", async () => {
      const [a, b] = await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      const [ma, mb] = await s.broker.receive("q", { maxMessages: 2 });
      const keep = { retainMs: 2 * 3600 * 1000, result: Buffer.from("r") };
      await s.broker.complete("q", a!, ma!.lockToken!, keep);
      await s.broker.complete("q", a!, ma!.lockToken!, keep);
      await s.broker.complete("q", a!, ma!.lockToken!);
      await fails(s.broker.complete("q", a!, mb!.lockToken!), LockLostError, "lock_lost");
      await fails(s.broker.abandon("q", a!, ma!.lockToken!), LockLostError, "lock_lost");
      await fails(s.broker.reject("q", a!, ma!.lockToken!), LockLostError, "lock_lost");
      await fails(s.broker.defer("q", a!, ma!.lockToken!), LockLostError, "lock_lost");
      await fails(
        s.broker.createQueue("other").then(() => s.broker.complete("other", a!, ma!.lockToken!)),
        LockLostError,
        "lock_lost",
      );
      const [rec] = await s.broker.getMessages([a!]);
      assert.equal(rec?.state, "completed");
      assert.equal(rec?.lockToken, undefined, "a completed message shows no lock token");
      assert.equal(rec?.result?.toString(), "r");
      const shown = (await s.broker.peek("q")).find((m) => m.seqNumber === a);
      assert.equal(shown?.lockToken, undefined);
      s.clock.advance(30 * 60 * 1000 - 1);
      await s.maintain();
      await s.broker.complete("q", a!, ma!.lockToken!, keep);
      s.clock.advance(1);
      await s.maintain();
      await fails(s.broker.complete("q", a!, ma!.lockToken!, keep), LockLostError, "lock_lost");
      assert.equal((await s.broker.getMessages([a!]))[0]?.state, "completed", "still kept");
      await fails(s.broker.complete("q", b!, mb!.lockToken!), LockLostError, "lock_lost");
    });

    it("3.2 a kept completion deleted within 30 minutes still answers its exact replay, and only that", async () => {
      const [a, b] = await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      const [ma, mb] = await s.broker.receive("q", { maxMessages: 2 });
      const keep = { retainMs: 2 * 3600 * 1000 };
      await s.broker.complete("q", a!, ma!.lockToken!, keep);
      await s.broker.complete("q", b!, mb!.lockToken!, keep);
      s.clock.advance(60_000);
      // Only the first is deleted: the second stays kept and answers from its row.
      assert.equal(await s.broker.deleteSettled("q", { states: ["completed"], seqNumbers: [a!] }), 1);
      assert.deepEqual(await s.broker.getMessages([a!]), []);
      await s.broker.complete("q", a!, ma!.lockToken!, keep);
      await fails(s.broker.complete("q", a!, mb!.lockToken!), LockLostError, "lock_lost");
      await fails(s.broker.abandon("q", a!, ma!.lockToken!), LockLostError, "lock_lost");
      await s.broker.complete("q", b!, mb!.lockToken!, keep);
      s.clock.advance(30 * 60 * 1000 - 60_000 - 1);
      await s.maintain();
      await s.broker.complete("q", a!, ma!.lockToken!);
      s.clock.advance(1);
      await s.maintain();
      await fails(s.broker.complete("q", a!, ma!.lockToken!), LockLostError, "lock_lost");
      await fails(s.broker.complete("q", b!, mb!.lockToken!), LockLostError, "lock_lost");
    });

    it("3.2 a completion kept briefly answers its replay after its row is swept", async () => {
      const [a] = await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.complete("q", a!, m.lockToken, { retainMs: 1000 });
      s.clock.advance(1000);
      await s.maintain();
      assert.deepEqual(await s.broker.getMessages([a!]), []);
      await s.broker.complete("q", a!, m.lockToken, { retainMs: 1000 });
      s.clock.advance(30 * 60 * 1000 - 1000);
      await s.maintain();
      await fails(s.broker.complete("q", a!, m.lockToken), LockLostError, "lock_lost");
    });

    it("3.3 a receive retried with the same attempt id returns the same batch and tokens, no extra delivery", async () => {
      await s.broker.send("q", [{ body: "a" }, { body: "b" }, { body: "c" }]);
      const first = await s.broker.receive("q", { maxMessages: 2, attemptId: "att-1" });
      assert.equal(first.length, 2);
      const before = await snapshot(s.broker, "q");
      const retry = await s.broker.receive("q", { maxMessages: 2, attemptId: "att-1" });
      assert.deepEqual(retry, first);
      assert.deepEqual(await snapshot(s.broker, "q"), before, "nothing claimed, no delivery_count change");
      const other = await s.broker.receive("q", { maxMessages: 2, attemptId: "att-2" });
      assert.deepEqual(
        other.map((m) => m.body.toString()),
        ["c"],
      );
      for (const m of retry) await s.broker.complete("q", m.seqNumber, m.lockToken!);
    });

    it("3.3 an attempt that claimed nothing records nothing", async () => {
      assert.deepEqual(await s.broker.receive("q", { attemptId: "att" }), []);
      const [seq] = await s.broker.send("q", { body: "a" });
      assert.deepEqual(seqs(await s.broker.receive("q", { attemptId: "att" })), [seq]);
    });

    it("3.3 an attempt record lives max(lock_duration_ms, 300000) ms and is per queue", async () => {
      await s.broker.createQueue("other");
      await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      await s.broker.send("other", { body: "o" });
      const first = await s.broker.receive("q", { attemptId: "att" });
      assert.deepEqual(
        (await s.broker.receive("other", { attemptId: "att" })).map((m) => m.body.toString()),
        ["o"],
      );
      s.clock.advance(299_999);
      await s.maintain();
      assert.deepEqual(await s.broker.receive("q", { attemptId: "att" }), first);
      s.clock.advance(1);
      await s.maintain();
      const fresh = await s.broker.receive("q", { attemptId: "att" });
      assert.equal(fresh.length, 1);
      assert.notDeepEqual(fresh, first);
    });

    it("3.3 an attempt record outlives a lock longer than 5 minutes", async () => {
      await s.broker.createQueue("long", { lockDurationMs: 600_000 });
      await s.broker.send("long", [{ body: "a" }, { body: "b" }]);
      const first = await s.broker.receive("long", { attemptId: "att" });
      s.clock.advance(599_999);
      assert.deepEqual(await s.broker.receive("long", { attemptId: "att" }), first);
    });

    it("3.4 no loss and no corruption under concurrent consumers with abandons", async () => {
      const N = Number(process.env.MQLITE_INTEGRITY_N ?? 1000);
      await s.broker.createQueue("int", { lockDurationMs: 60_000, maxDeliveryCount: 1000 });
      const expected = new Map<string, number>();
      for (let i = 0; i < N; i += 250) {
        const batch = Array.from({ length: Math.min(250, N - i) }, (_, j) => {
          const body = randomBytes(1 + ((i + j) % 300));
          const value = String(i + j);
          expected.set(value, 0);
          return { body, messageId: value, properties: { sha256: sha256(body), value } };
        });
        await s.broker.send("int", batch);
      }
      let abandons = 0;
      let rnd = 42;
      const coin = () => {
        rnd = (rnd * 1103515245 + 12345) & 0x7fffffff;
        return rnd % 5 === 0;
      };
      const consumer = async () => {
        for (;;) {
          const got: Message[] = await s.broker.receive("int", { maxMessages: 7 });
          if (got.length === 0) return;
          for (const m of got) {
            assert.equal(sha256(m.body), m.properties?.sha256, "the body matches its hash");
            if (coin()) {
              abandons++;
              await s.broker.abandon("int", m.seqNumber, m.lockToken!);
            } else {
              const value = m.properties!.value!;
              await s.broker.complete("int", m.seqNumber, m.lockToken!);
              expected.set(value, (expected.get(value) ?? 0) + 1);
            }
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, consumer));
      assert.ok(abandons > 0, "some messages were abandoned and redelivered");
      const wrong = [...expected].filter(([, n]) => n !== 1);
      assert.deepEqual(wrong, [], "every value completed exactly once");
      assert.equal((await s.broker.stats("int")).total, 0);
    });
  });

  describe("§3 start-up recovery", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory({ durable: true });
      assert.ok(s.restart, "a durable subject can restart");
      await s.broker.createQueue("q", { lockDurationMs: 1000, maxDeliveryCount: 2 });
    });
    afterEach(() => s.close());

    it("3.1 an orphaned lapsed lock is reclaimed at start-up with the reaper's rule", async () => {
      const [once, twice] = await s.broker.send("q", [{ body: "once" }, { body: "twice" }]);
      const m2 = await s.broker.receive("q", { maxMessages: 2 });
      await s.broker.abandon("q", twice!, m2[1]!.lockToken!);
      const again = await receiveOne(s.broker, "q");
      assert.equal(again.seqNumber, twice);
      assert.equal(again.deliveryCount, 2);
      s.clock.advance(1000);
      await s.restart!();
      const peeked = await s.broker.peek("q");
      assert.deepEqual(
        peeked.map((m) => [m.seqNumber, m.state, m.deadLetterReason]),
        [
          [once, "active", undefined],
          [twice, "dead_lettered", "MaxDeliveryCountExceeded"],
        ],
        "reclaimed by the start-up pass itself, before any maintenance",
      );
      assert.ok(m2[0]);
    });

    it("3.1 a crash never buys an extra delivery", async () => {
      await s.broker.createQueue("one", { lockDurationMs: 1000, maxDeliveryCount: 1 });
      await s.broker.send("one", { body: "x" });
      await receiveOne(s.broker, "one");
      s.clock.advance(5000);
      await s.restart!();
      assert.deepEqual(await s.broker.receive("one"), []);
      assert.equal((await s.broker.stats("one")).deadLettered, 1);
    });

    it("3.1 a lock taken before the restart keeps fencing settlement after it", async () => {
      await s.broker.send("q", { body: "x" });
      const m = await receiveOne(s.broker, "q");
      await s.restart!();
      await s.broker.complete("q", m.seqNumber, m.lockToken);
      assert.equal((await s.broker.stats("q")).total, 0);
    });

    it("3.2 a settlement receipt survives a restart", async () => {
      await s.broker.send("q", { body: "x" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.complete("q", m.seqNumber, m.lockToken);
      await s.restart!();
      await s.broker.complete("q", m.seqNumber, m.lockToken);
      await fails(s.broker.abandon("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
    });
  });
});
