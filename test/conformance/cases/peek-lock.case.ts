import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

cases((factory) => {
  describe("§1 peek-lock lifecycle", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000, maxDeliveryCount: 2 });
    });
    afterEach(() => s.close());

    it("1.1 receive locks an active message for lock_duration_ms and returns a lock token", async () => {
      const [seq] = await s.broker.send("q", { body: "hello" });
      const [m] = await s.broker.receive("q");
      assert.ok(m);
      assert.equal(m.seqNumber, seq);
      assert.equal(m.body.toString(), "hello");
      assert.match(m.lockToken ?? "", /^[0-9a-f]{32}$/);
      assert.equal(m.lockedUntil, s.clock.now() + 1000);
      const [peeked] = await s.broker.peek("q");
      assert.equal(peeked?.state, "locked");
      assert.equal(peeked?.lockToken, undefined, "peek never shows the lock token");
    });

    it("1.2 a locked message is not handed to another receive", async () => {
      await s.broker.send("q", { body: "one" });
      const first = await s.broker.receive("q");
      const second = await s.broker.receive("q");
      assert.equal(first.length, 1);
      assert.deepEqual(second, []);
    });

    it("1.3 each claim increments delivery_count", async () => {
      await s.broker.send("q", { body: "x" });
      const [a] = await s.broker.receive("q");
      assert.equal(a?.deliveryCount, 1);
      await s.broker.abandon("q", a!.seqNumber, a!.lockToken!);
      const [b] = await s.broker.receive("q");
      assert.equal(b?.deliveryCount, 2);
    });

    it("1.4 after the lock expires the reaper makes it active again, or dead-letters it at max", async () => {
      await s.broker.send("q", { body: "x" });
      await s.broker.receive("q");
      s.clock.advance(1000);
      await s.maintain();
      const [again] = await s.broker.receive("q");
      assert.equal(again?.deliveryCount, 2);
      s.clock.advance(1000);
      await s.maintain();
      const [dead] = await s.broker.peek("q", { state: "dead_lettered" });
      assert.equal(dead?.deadLetterReason, "MaxDeliveryCountExceeded");
      assert.deepEqual(await s.broker.receive("q"), []);
    });
  });
});
