import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { AlreadyExistsError } from "../../../src/contract/errors.js";
import { bodies, fails, receiveOne, snapshot } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

cases((factory) => {
  describe("§4 deduplication", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { dedupWindowMs: 10_000 });
    });
    afterEach(() => s.close());

    it("4.1 a repeat message_id inside the window returns the original seq and enqueues nothing", async () => {
      const [first] = await s.broker.send("q", { body: "a", messageId: "m1" });
      s.clock.advance(5000);
      const [again] = await s.broker.send("q", { body: "a", messageId: "m1", subject: "ignored" });
      assert.equal(again, first);
      const stored = await s.broker.peek("q");
      assert.equal(stored.length, 1);
      assert.equal(stored[0]?.subject, undefined, "only the body is compared; the first copy stays");
    });

    it("4.1 without a message_id the key is the body's hash", async () => {
      const [first] = await s.broker.send("q", { body: "same" });
      const [again] = await s.broker.send("q", { body: "same" });
      const [other] = await s.broker.send("q", { body: "different" });
      assert.equal(again, first);
      assert.ok(other! > first!);
      assert.deepEqual(bodies(await s.broker.peek("q")), ["same", "different"]);
    });

    it("4.1 the window is fixed at the first insert; after it the key is free again", async () => {
      const [first] = await s.broker.send("q", { body: "a", messageId: "m1" });
      s.clock.advance(9999);
      assert.deepEqual(await s.broker.send("q", { body: "a", messageId: "m1" }), [first]);
      s.clock.advance(1);
      const [second] = await s.broker.send("q", { body: "a", messageId: "m1" });
      assert.ok(second! > first!, "a duplicate hit did not refresh the window");
      s.clock.advance(9999);
      await s.maintain();
      await fails(s.broker.send("q", { body: "b", messageId: "m1" }), AlreadyExistsError, "already_exists");
      assert.equal((await s.broker.stats("q")).total, 2);
    });

    it("4.1 the key outlives a completed message inside the window", async () => {
      const [first] = await s.broker.send("q", { body: "a", messageId: "m1" });
      const m = await receiveOne(s.broker, "q");
      await s.broker.complete("q", m.seqNumber, m.lockToken);
      assert.deepEqual(await s.broker.send("q", { body: "a", messageId: "m1" }), [first]);
      assert.equal((await s.broker.stats("q")).total, 0, "nothing is enqueued again");
    });

    it("4.1 a scheduled send is deduplicated too", async () => {
      const at = s.clock.now() + 1000;
      const [first] = await s.broker.schedule("q", { body: "a", messageId: "m1" }, at);
      assert.deepEqual(await s.broker.schedule("q", { body: "a", messageId: "m1" }, at), [first]);
      assert.deepEqual(await s.broker.send("q", { body: "a", messageId: "m1" }), [first]);
      assert.equal((await s.broker.stats("q")).scheduled, 1);
    });

    it("4.1 no dedup without a window", async () => {
      await s.broker.createQueue("plain");
      const a = await s.broker.send("plain", { body: "a", messageId: "m1" });
      const b = await s.broker.send("plain", { body: "b", messageId: "m1" });
      assert.notDeepEqual(a, b);
      assert.equal((await s.broker.stats("plain")).total, 2);
    });

    it("4.2 a single send with the same id and another body is already_exists and stores nothing", async () => {
      await s.broker.send("q", { body: "a", messageId: "m1" });
      const before = await snapshot(s.broker, "q");
      await fails(s.broker.send("q", { body: "b", messageId: "m1" }), AlreadyExistsError, "already_exists");
      await fails(s.broker.send("q", [{ body: "b", messageId: "m1" }]), AlreadyExistsError, "already_exists");
      assert.deepEqual(await snapshot(s.broker, "q"), before);
    });

    it("4.2 a single scheduled message with a conflicting body is already_exists", async () => {
      await s.broker.send("q", { body: "a", messageId: "m1" });
      await fails(
        s.broker.schedule("q", { body: "b", messageId: "m1" }, s.clock.now() + 1000),
        AlreadyExistsError,
        "already_exists",
      );
      assert.equal((await s.broker.stats("q")).total, 1);
    });

    it("4.3 in a multi-message send the conflicting slot is 0 and the rest commit", async () => {
      const [orig] = await s.broker.send("q", { body: "a", messageId: "m1" });
      const res = await s.broker.send("q", [
        { body: "x", messageId: "m2" },
        { body: "b", messageId: "m1" },
        { body: "a", messageId: "m1" },
        { body: "y", messageId: "m3" },
      ]);
      assert.equal(res.length, 4);
      assert.ok(res[0]! > orig!);
      assert.equal(res[1], 0, "conflict");
      assert.equal(res[2], orig, "duplicate");
      assert.ok(res[3]! > res[0]!);
      assert.deepEqual(bodies(await s.broker.peek("q")), ["a", "x", "y"]);
    });

    it("4.3 duplicates and conflicts inside one batch", async () => {
      const res = await s.broker.send("q", [
        { body: "a", messageId: "k" },
        { body: "a", messageId: "k" },
        { body: "b", messageId: "k" },
      ]);
      assert.equal(res[1], res[0]);
      assert.equal(res[2], 0);
      assert.equal((await s.broker.stats("q")).total, 1);
    });

    it("4.3 a multi-message schedule: conflicting slots are 0, the rest commit", async () => {
      await s.broker.send("q", { body: "a", messageId: "m1" });
      const res = await s.broker.schedule(
        "q",
        [
          { body: "b", messageId: "m1" },
          { body: "c", messageId: "m2" },
        ],
        s.clock.now() + 1000,
      );
      assert.equal(res[0], 0);
      assert.ok(res[1]! > 0);
      const stats = await s.broker.stats("q");
      assert.deepEqual([stats.active, stats.scheduled], [1, 1]);
    });

    it("4.x the window is per queue", async () => {
      await s.broker.createQueue("q2", { dedupWindowMs: 10_000 });
      const [a] = await s.broker.send("q", { body: "a", messageId: "m1" });
      const [b] = await s.broker.send("q2", { body: "b", messageId: "m1" });
      assert.ok(a! > 0 && b! > a!);
    });
  });
});
