import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { InvalidArgumentError, LockLostError, NotFoundError } from "../../../src/contract/errors.js";
import { bodies, fails, receiveOne, seqs, snapshot } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

cases((factory) => {
  describe("§2 settlement", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000, maxDeliveryCount: 3 });
    });
    afterEach(() => s.close());

    it("2.1 complete deletes the message", async () => {
      await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      const m = await receiveOne(s.broker, "q");
      await s.broker.complete("q", m.seqNumber, m.lockToken);
      const left = await s.broker.peek("q");
      assert.deepEqual(bodies(left), ["b"]);
      assert.equal((await s.broker.stats("q")).total, 1);
    });

    it("2.2 abandon without delay makes the message active again at once", async () => {
      const [seq] = await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.abandon("q", m.seqNumber, m.lockToken);
      const [peeked] = await s.broker.peek("q");
      assert.equal(peeked?.state, "active");
      assert.equal(peeked?.lockedUntil, undefined);
      const again = await receiveOne(s.broker, "q");
      assert.equal(again.seqNumber, seq);
      assert.equal(again.deliveryCount, 2);
      assert.notEqual(again.lockToken, m.lockToken, "a redelivery has a fresh token");
    });

    it("2.2 abandon at delivery_count >= max dead-letters with MaxDeliveryCountExceeded", async () => {
      await s.broker.send("q", { body: "a" });
      let visibleAt = 0;
      for (let i = 1; i <= 3; i++) {
        const m = await receiveOne(s.broker, "q");
        assert.equal(m.deliveryCount, i);
        s.clock.advance(100);
        visibleAt = (await s.broker.peek("q"))[0]?.visibleAt ?? 0;
        await s.broker.abandon("q", m.seqNumber, m.lockToken, { delayMs: i === 3 ? 5000 : 0 });
      }
      const [dead] = await s.broker.peek("q");
      assert.equal(dead?.state, "dead_lettered");
      assert.equal(dead?.deadLetterReason, "MaxDeliveryCountExceeded");
      assert.equal(dead?.visibleAt, visibleAt, "visible_at is kept, neither moved to now nor delayed");
      assert.deepEqual(await s.broker.receive("q"), []);
    });

    it("2.2 abandon with delay_ms parks the message in scheduled until the delay lapses", async () => {
      const [seq] = await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      const t0 = s.clock.now();
      await s.broker.abandon("q", m.seqNumber, m.lockToken, { delayMs: 5000 });
      const [parked] = await s.broker.peek("q");
      assert.equal(parked?.state, "scheduled");
      assert.equal(parked?.visibleAt, t0 + 5000);
      s.clock.advance(4999);
      await s.maintain();
      assert.deepEqual(await s.broker.receive("q"), []);
      s.clock.advance(1);
      await s.maintain();
      const again = await receiveOne(s.broker, "q");
      assert.equal(again.seqNumber, seq);
      assert.equal(again.deliveryCount, 2);
    });

    it("2.3 reject dead-letters with reason AppRequested by default", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.reject("q", m.seqNumber, m.lockToken);
      const [dead] = await s.broker.peek("q", { state: "dead_lettered" });
      assert.equal(dead?.seqNumber, m.seqNumber);
      assert.equal(dead?.deadLetterReason, "AppRequested");
      assert.equal(dead?.deadLetterDescription, undefined, "an empty description is not stored");
      assert.deepEqual(await s.broker.receive("q"), []);
    });

    it("2.3 reject stores the given reason and description", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.reject("q", m.seqNumber, m.lockToken, { reason: "BadInput", description: "no amount" });
      const [dead] = await s.broker.peek("q", { state: "dead_lettered" });
      assert.equal(dead?.deadLetterReason, "BadInput");
      assert.equal(dead?.deadLetterDescription, "no amount");
    });

    it("2.4 a deferred message is only fetched by receiveDeferred, never by receive", async () => {
      const [seq] = await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.defer("q", m.seqNumber, m.lockToken);
      assert.deepEqual(await s.broker.receive("q", { maxMessages: 10 }), []);
      const [peeked] = await s.broker.peek("q", { state: "deferred" });
      assert.equal(peeked?.seqNumber, seq, "peek state=deferred finds it");
      const [again] = await s.broker.receiveDeferred("q", [seq!]);
      assert.equal(again?.seqNumber, seq);
      assert.equal(again?.deliveryCount, 2);
      assert.ok(again?.lockToken && again.lockToken !== m.lockToken);
      assert.equal(again?.lockedUntil, s.clock.now() + 1000);
      await s.broker.complete("q", seq!, again!.lockToken!);
      assert.equal((await s.broker.stats("q")).total, 0);
    });

    it("2.4 a deferred message has no auto-recovery without a TTL", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.defer("q", m.seqNumber, m.lockToken);
      s.clock.advance(365 * 24 * 3600 * 1000);
      await s.maintain();
      assert.equal((await s.broker.peek("q"))[0]?.state, "deferred");
      assert.deepEqual(await s.broker.receive("q"), []);
    });

    it("2.4 a deferred head blocks its group until it is retrieved and settled; other groups proceed", async () => {
      await s.broker.createQueue("g", { orderingMode: "group_fifo" });
      const [a1, a2, b1] = await s.broker.send("g", [
        { body: "a1", groupId: "a" },
        { body: "a2", groupId: "a" },
        { body: "b1", groupId: "b" },
      ]);
      const head = await receiveOne(s.broker, "g");
      assert.equal(head.seqNumber, a1);
      await s.broker.defer("g", a1!, head.lockToken);
      const other = await s.broker.receive("g", { maxMessages: 10 });
      assert.deepEqual(seqs(other), [b1], "group b proceeds, a2 waits behind its deferred head");
      const [fetched] = await s.broker.receiveDeferred("g", [a1!]);
      assert.deepEqual(await s.broker.receive("g"), [], "retrieved but not settled: still blocks");
      await s.broker.complete("g", a1!, fetched!.lockToken!);
      assert.deepEqual(seqs(await s.broker.receive("g")), [a2]);
    });

    it("2.4 a deferred grouped message on a standard queue blocks its group", async () => {
      const [a1, a2] = await s.broker.send("q", [
        { body: "a1", groupId: "a" },
        { body: "a2", groupId: "a" },
      ]);
      const head = await receiveOne(s.broker, "q");
      await s.broker.defer("q", a1!, head.lockToken);
      assert.deepEqual(await s.broker.receive("q"), []);
      const [fetched] = await s.broker.receiveDeferred("q", [a1!]);
      await s.broker.abandon("q", a1!, fetched!.lockToken!);
      assert.deepEqual(seqs(await s.broker.receive("q")), [a1], "the head is redelivered first");
      assert.ok(a2);
    });

    it("2.4 a deferred head blocks the whole strict_fifo queue", async () => {
      await s.broker.createQueue("strict", { orderingMode: "strict_fifo" });
      const [m1, m2] = await s.broker.send("strict", [
        { body: "1", groupId: "x" },
        { body: "2", groupId: "y" },
      ]);
      const head = await receiveOne(s.broker, "strict");
      await s.broker.defer("strict", m1!, head.lockToken);
      assert.deepEqual(await s.broker.receive("strict"), []);
      const [fetched] = await s.broker.receiveDeferred("strict", [m1!]);
      await s.broker.complete("strict", m1!, fetched!.lockToken!);
      assert.deepEqual(seqs(await s.broker.receive("strict")), [m2]);
    });

    it("2.4 an ungrouped deferred message on a standard queue blocks nothing", async () => {
      const [m1, m2] = await s.broker.send("q", [{ body: "1" }, { body: "2" }]);
      const head = await receiveOne(s.broker, "q");
      await s.broker.defer("q", m1!, head.lockToken);
      assert.deepEqual(seqs(await s.broker.receive("q")), [m2]);
    });

    it("2.5 renew extends the lease by lock_duration_ms from now", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      const t0 = s.clock.now();
      s.clock.advance(600);
      await s.broker.renew("q", m.seqNumber, m.lockToken);
      assert.equal((await s.broker.peek("q"))[0]?.lockedUntil, t0 + 1600);
      s.clock.advance(999);
      await s.maintain();
      assert.equal(
        (await s.broker.peek("q"))[0]?.state,
        "locked",
        "the old deadline has passed, the new one holds",
      );
      await s.broker.complete("q", m.seqNumber, m.lockToken);
      assert.equal((await s.broker.stats("q")).total, 0);
    });

    it("2.5 renew never shortens a lease", async () => {
      await s.broker.createQueue("q", { lockDurationMs: 10_000 });
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      const t0 = s.clock.now();
      await s.broker.createQueue("q", { lockDurationMs: 1000 });
      s.clock.advance(100);
      await s.broker.renew("q", m.seqNumber, m.lockToken);
      assert.equal((await s.broker.peek("q"))[0]?.lockedUntil, t0 + 10_000);
    });

    it("2.5 settlement is fenced on the token only: a lapsed lease not yet taken back still settles (§0.5)", async () => {
      await s.broker.send("q", [{ body: "a" }, { body: "b" }, { body: "c" }, { body: "d" }, { body: "e" }]);
      const [a, b, c, d, e] = await s.broker.receive("q", { maxMessages: 5 });
      s.clock.advance(5000);
      await s.broker.renew("q", e!.seqNumber, e!.lockToken!);
      await s.broker.complete("q", a!.seqNumber, a!.lockToken!);
      await s.broker.abandon("q", b!.seqNumber, b!.lockToken!);
      await s.broker.reject("q", c!.seqNumber, c!.lockToken!);
      await s.broker.defer("q", d!.seqNumber, d!.lockToken!);
      const peeked = await s.broker.peek("q");
      assert.deepEqual(
        peeked.map((m) => [m.body.toString(), m.state]),
        [
          ["b", "active"],
          ["c", "dead_lettered"],
          ["d", "deferred"],
          ["e", "locked"],
        ],
      );
      assert.equal(peeked[3]?.lockedUntil, s.clock.now() + 1000, "renew extends a lapsed lease from now");
    });

    it("2.5 the reaper takes a lapsed lease back by clearing its token: then it is lock_lost", async () => {
      await s.broker.send("q", [{ body: "a" }]);
      const m = await receiveOne(s.broker, "q");
      s.clock.advance(1000);
      await s.maintain();
      await fails(s.broker.renew("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.complete("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.abandon("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.reject("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.defer("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      const [peeked] = await s.broker.peek("q");
      assert.equal(peeked?.state, "active", "nothing changed after the reaper");
      assert.equal(peeked?.deliveryCount, 1);
      assert.equal(peeked?.lockToken, undefined);
    });

    it("2.5 the TTL sweep takes a locked message back by clearing its token: then it is lock_lost", async () => {
      await s.broker.send("q", [{ body: "a" }], { ttlMs: 500 });
      const m = await receiveOne(s.broker, "q");
      s.clock.advance(600);
      await s.broker.renew("q", m.seqNumber, m.lockToken);
      await s.maintain();
      const [peeked] = await s.broker.peek("q");
      assert.equal(peeked?.state, "dead_lettered");
      assert.equal(peeked?.deadLetterReason, "TTLExpired");
      await fails(s.broker.complete("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.renew("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
    });

    it("2.5 one millisecond before the deadline the lease is still live", async () => {
      await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      const [a, b] = await s.broker.receive("q", { maxMessages: 2 });
      s.clock.advance(999);
      await s.broker.renew("q", a!.seqNumber, a!.lockToken!);
      await s.broker.complete("q", b!.seqNumber, b!.lockToken!);
      assert.deepEqual(seqs(await s.broker.peek("q")), [a!.seqNumber]);
    });

    it("2.6 a wrong token is lock_lost and changes nothing", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      const before = await snapshot(s.broker, "q");
      const wrong = "0".repeat(32);
      await fails(s.broker.complete("q", m.seqNumber, wrong), LockLostError, "lock_lost");
      await fails(s.broker.abandon("q", m.seqNumber, wrong), LockLostError, "lock_lost");
      await fails(s.broker.reject("q", m.seqNumber, wrong), LockLostError, "lock_lost");
      await fails(s.broker.defer("q", m.seqNumber, wrong), LockLostError, "lock_lost");
      await fails(s.broker.renew("q", m.seqNumber, wrong), LockLostError, "lock_lost");
      assert.deepEqual(await snapshot(s.broker, "q"), before);
    });

    it("2.6 an expired (reaped) token is lock_lost", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      s.clock.advance(1000);
      await s.maintain();
      await fails(s.broker.complete("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.renew("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      assert.equal((await s.broker.peek("q"))[0]?.state, "active");
    });

    it("2.6 an exact replay of a committed settlement succeeds from its receipt, even after the lease", async () => {
      const [a, b, c, d] = await s.broker.send("q", [
        { body: "a" },
        { body: "b" },
        { body: "c" },
        { body: "d" },
      ]);
      const got = await s.broker.receive("q", { maxMessages: 4 });
      const token = (seq: number | undefined) => got.find((m) => m.seqNumber === seq)!.lockToken!;
      await s.broker.complete("q", a!, token(a));
      await s.broker.abandon("q", b!, token(b), { delayMs: 500 });
      await s.broker.reject("q", c!, token(c), { reason: "R", description: "D" });
      await s.broker.defer("q", d!, token(d));
      const after = await snapshot(s.broker, "q");
      s.clock.advance(5000);
      await s.broker.complete("q", a!, token(a));
      await s.broker.abandon("q", b!, token(b), { delayMs: 500 });
      await s.broker.reject("q", c!, token(c), { reason: "R", description: "D" });
      await s.broker.defer("q", d!, token(d));
      const replayed = await snapshot(s.broker, "q");
      assert.deepEqual(replayed.messages, after.messages, "a replay changes nothing");
    });

    it("2.6 renew has no receipts: a renew after complete is lock_lost", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.complete("q", m.seqNumber, m.lockToken);
      await fails(s.broker.renew("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
    });

    it("2.6 an empty token is lock_lost", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await fails(s.broker.complete("q", m.seqNumber, ""), LockLostError, "lock_lost");
      await fails(s.broker.abandon("q", m.seqNumber, ""), LockLostError, "lock_lost");
      await fails(s.broker.reject("q", m.seqNumber, ""), LockLostError, "lock_lost");
      await fails(s.broker.defer("q", m.seqNumber, ""), LockLostError, "lock_lost");
      await fails(s.broker.renew("q", m.seqNumber, ""), LockLostError, "lock_lost");
      assert.equal((await s.broker.peek("q"))[0]?.state, "locked");
    });

    it("2.6 settling on an unknown queue is lock_lost; renewing on one is not_found", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await fails(s.broker.complete("nope", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.abandon("nope", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.reject("nope", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.defer("nope", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.renew("nope", m.seqNumber, m.lockToken), NotFoundError, "not_found");
      assert.equal((await s.broker.peek("q"))[0]?.state, "locked");
    });

    it("2.6 a settlement in the wrong state is lock_lost (a deferred message's old token)", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.defer("q", m.seqNumber, m.lockToken);
      await fails(s.broker.complete("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      await fails(s.broker.abandon("q", m.seqNumber, m.lockToken), LockLostError, "lock_lost");
      assert.equal((await s.broker.peek("q"))[0]?.state, "deferred");
    });

    it("2.7 completeBatch fences each item; a stale item is ok:false and never fails the batch", async () => {
      const sent = await s.broker.send("q", [{ body: "a" }, { body: "b" }, { body: "c" }]);
      const got = await s.broker.receive("q", { maxMessages: 3 });
      const [a, b, c] = got;
      const results = await s.broker.completeBatch("q", [
        { seqNumber: a!.seqNumber, lockToken: a!.lockToken! },
        { seqNumber: b!.seqNumber, lockToken: "f".repeat(32) },
        { seqNumber: c!.seqNumber, lockToken: "" },
        { seqNumber: 999_999, lockToken: c!.lockToken! },
        { seqNumber: c!.seqNumber, lockToken: c!.lockToken! },
      ]);
      assert.deepEqual(results, [
        { seqNumber: a!.seqNumber, ok: true },
        { seqNumber: b!.seqNumber, ok: false },
        { seqNumber: c!.seqNumber, ok: false },
        { seqNumber: 999_999, ok: false },
        { seqNumber: c!.seqNumber, ok: true },
      ]);
      assert.deepEqual(seqs(await s.broker.peek("q")), [sent[1]]);
    });

    it("2.7 completeBatch: a replay and a duplicate pair are ok (receipts)", async () => {
      await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      const got = await s.broker.receive("q", { maxMessages: 2 });
      const items = got.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken! }));
      const dup = await s.broker.completeBatch("q", [items[0]!, items[0]!]);
      assert.deepEqual(
        dup.map((r) => r.ok),
        [true, true],
      );
      const replay = await s.broker.completeBatch("q", items);
      assert.deepEqual(
        replay.map((r) => r.ok),
        [true, true],
      );
      await s.broker.complete("q", items[0]!.seqNumber, items[0]!.lockToken);
      assert.equal((await s.broker.stats("q")).total, 0);
    });

    it("2.7 completeBatch has no size limit (more than 512 items)", async () => {
      await s.broker.send(
        "q",
        Array.from({ length: 600 }, (_, i) => ({ body: `m${i}` })),
      );
      const got = [
        ...(await s.broker.receive("q", { maxMessages: 256 })),
        ...(await s.broker.receive("q", { maxMessages: 256 })),
        ...(await s.broker.receive("q", { maxMessages: 256 })),
      ];
      assert.equal(got.length, 600);
      const results = await s.broker.completeBatch(
        "q",
        got.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken! })),
      );
      assert.equal(results.length, 600);
      assert.ok(results.every((r) => r.ok));
      assert.deepEqual(
        results.map((r) => r.seqNumber),
        seqs(got),
        "positional",
      );
      assert.equal((await s.broker.stats("q")).total, 0);
    });

    it("2.7 completeBatch on an unknown queue or with an empty list never fails", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      assert.deepEqual(
        await s.broker.completeBatch("nope", [{ seqNumber: m.seqNumber, lockToken: m.lockToken }]),
        [{ seqNumber: m.seqNumber, ok: false }],
      );
      assert.deepEqual(await s.broker.completeBatch("q", []), []);
      assert.equal((await s.broker.peek("q"))[0]?.state, "locked");
    });

    it("2.7 completeBatch after the lease lapsed but before the reaper is ok; after the reaper ok:false", async () => {
      await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      const [a, b] = await s.broker.receive("q", { maxMessages: 2 });
      s.clock.advance(1000);
      assert.deepEqual(
        await s.broker.completeBatch("q", [{ seqNumber: a!.seqNumber, lockToken: a!.lockToken! }]),
        [{ seqNumber: a!.seqNumber, ok: true }],
      );
      await s.maintain();
      assert.deepEqual(
        await s.broker.completeBatch("q", [{ seqNumber: b!.seqNumber, lockToken: b!.lockToken! }]),
        [{ seqNumber: b!.seqNumber, ok: false }],
      );
      assert.deepEqual(bodies(await s.broker.peek("q")), ["b"]);
    });

    it("2.8 renewBatch renews each live lease and reports the committed deadline", async () => {
      await s.broker.send("q", [{ body: "a" }, { body: "b" }, { body: "c" }]);
      const [a, b, c] = await s.broker.receive("q", { maxMessages: 3 });
      await s.broker.complete("q", c!.seqNumber, c!.lockToken!);
      s.clock.advance(400);
      const results = await s.broker.renewBatch("q", [
        { seqNumber: a!.seqNumber, lockToken: a!.lockToken! },
        { seqNumber: b!.seqNumber, lockToken: "" },
        { seqNumber: b!.seqNumber, lockToken: a!.lockToken! },
        { seqNumber: c!.seqNumber, lockToken: c!.lockToken! },
      ]);
      assert.deepEqual(results, [
        { seqNumber: a!.seqNumber, ok: true, lockedUntil: s.clock.now() + 1000 },
        { seqNumber: b!.seqNumber, ok: false },
        { seqNumber: b!.seqNumber, ok: false },
        { seqNumber: c!.seqNumber, ok: false },
      ]);
      const peeked = await s.broker.peek("q");
      assert.deepEqual(
        peeked.map((m) => m.lockedUntil),
        [s.clock.now() + 1000, s.clock.now() + 600],
      );
    });

    it("2.8 renewBatch never shortens a lease and reports the deadline it kept", async () => {
      await s.broker.createQueue("q", { lockDurationMs: 10_000 });
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.createQueue("q", { lockDurationMs: 1000 });
      const [r] = await s.broker.renewBatch("q", [{ seqNumber: m.seqNumber, lockToken: m.lockToken }]);
      assert.deepEqual(r, { seqNumber: m.seqNumber, ok: true, lockedUntil: m.lockedUntil });
    });

    it("2.8 renewBatch renews a lapsed lease the reaper has not taken back; a reaped one is ok:false", async () => {
      await s.broker.send("q", [{ body: "a" }, { body: "b" }]);
      const [a, b] = await s.broker.receive("q", { maxMessages: 2 });
      s.clock.advance(1000);
      const [r] = await s.broker.renewBatch("q", [{ seqNumber: a!.seqNumber, lockToken: a!.lockToken! }]);
      assert.deepEqual(r, { seqNumber: a!.seqNumber, ok: true, lockedUntil: s.clock.now() + 1000 });
      await s.maintain();
      const [lost] = await s.broker.renewBatch("q", [{ seqNumber: b!.seqNumber, lockToken: b!.lockToken! }]);
      assert.equal(lost?.ok, false);
      assert.equal(lost?.lockedUntil, undefined);
    });

    it("2.8 renewBatch takes at most 512 items: 513 is invalid_argument", async () => {
      await s.broker.send("q", { body: "a" });
      const m = await receiveOne(s.broker, "q");
      const item = { seqNumber: m.seqNumber, lockToken: m.lockToken };
      const ok = await s.broker.renewBatch(
        "q",
        Array.from({ length: 512 }, () => item),
      );
      assert.equal(ok.length, 512);
      assert.ok(ok.every((r) => r.ok));
      await fails(
        s.broker.renewBatch(
          "q",
          Array.from({ length: 513 }, () => item),
        ),
        InvalidArgumentError,
        "invalid_argument",
      );
    });

    it("2.8 renewBatch: an empty list, or only empty tokens, is all false without a queue check", async () => {
      assert.deepEqual(await s.broker.renewBatch("nope", []), []);
      assert.deepEqual(
        await s.broker.renewBatch("nope", [
          { seqNumber: 1, lockToken: "" },
          { seqNumber: 2, lockToken: "" },
        ]),
        [
          { seqNumber: 1, ok: false },
          { seqNumber: 2, ok: false },
        ],
      );
      await fails(
        s.broker.renewBatch("nope", [
          { seqNumber: 1, lockToken: "" },
          { seqNumber: 2, lockToken: "a".repeat(32) },
        ]),
        NotFoundError,
        "not_found",
      );
    });
  });

  describe("§1.9 ReceiveDeferred", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000, maxDeliveryCount: 1 });
      await s.broker.createQueue("other");
    });
    afterEach(() => s.close());

    it("skips every seq that is not deferred in this queue", async () => {
      const [deferred, locked, active] = await s.broker.send("q", [
        { body: "d" },
        { body: "l" },
        { body: "a" },
      ]);
      const [d, l] = await s.broker.receive("q", { maxMessages: 2 });
      await s.broker.defer("q", deferred!, d!.lockToken!);
      const [elsewhere] = await s.broker.send("other", { body: "o" });
      const o = await receiveOne(s.broker, "other");
      await s.broker.defer("other", elsewhere!, o.lockToken);
      const got = await s.broker.receiveDeferred("q", [active!, locked!, elsewhere!, 999_999, deferred!]);
      assert.deepEqual(seqs(got), [deferred]);
      assert.equal((await s.broker.peek("other"))[0]?.state, "deferred");
      assert.ok(l);
      assert.deepEqual(await s.broker.receiveDeferred("q", []), []);
    });

    it("has no max-delivery check", async () => {
      const [seq] = await s.broker.send("q", { body: "d" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.defer("q", seq!, m.lockToken);
      const [again] = await s.broker.receiveDeferred("q", [seq!]);
      assert.equal(again?.deliveryCount, 2, "past max_delivery_count = 1, still delivered");
      assert.equal((await s.broker.peek("q"))[0]?.state, "locked");
    });

    it("on an unknown queue is not_found", async () => {
      await fails(s.broker.receiveDeferred("nope", [1]), NotFoundError, "not_found");
    });

    it("stops after the message that crosses the 32 MiB answer budget; the rest stay deferred", async () => {
      await s.broker.createQueue("big", { lockDurationMs: 60_000 });
      const body = Buffer.alloc(1024 * 1024, 7);
      const sent: number[] = [];
      for (let i = 0; i < 36; i++) sent.push(...(await s.broker.send("big", { body })));
      for (;;) {
        const got = await s.broker.receive("big", { maxMessages: 16 });
        if (got.length === 0) break;
        for (const m of got) await s.broker.defer("big", m.seqNumber, m.lockToken!);
      }
      // Asked in reverse: the answer keeps the order asked.
      const asked = [...sent].reverse();
      const first = await s.broker.receiveDeferred("big", asked);
      assert.deepEqual(seqs(first), asked.slice(0, 32), "32 MiB, the 32nd crossing the budget");
      assert.equal((await s.broker.stats("big")).deferred, 4, "the others were not locked");
      const rest = await s.broker.receiveDeferred("big", asked);
      assert.deepEqual(seqs(rest), asked.slice(32));
    });
  });
});
