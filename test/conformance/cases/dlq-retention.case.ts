import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { deadLetter, seqs } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

const DAY = 24 * 3600 * 1000;

cases((factory) => {
  describe("§8 DLQ retention", () => {
    let s: Subject;
    afterEach(() => s.close());

    /**
     * Live messages of every other state, which retention must never touch. The active one waits
     * behind its group's locked head, so later receives never claim it.
     */
    async function liveMessages(queue: string): Promise<number> {
      await s.broker.send(queue, [
        { body: "locked", groupId: "g" },
        { body: "active", groupId: "g" },
        { body: "deferred", groupId: "h" },
      ]);
      await s.broker.schedule(queue, { body: "scheduled" }, s.clock.now() + 100 * DAY);
      const [, deferred] = await s.broker.receive(queue, { maxMessages: 3 });
      await s.broker.defer(queue, deferred!.seqNumber, deferred!.lockToken!);
      const stats = await s.broker.stats(queue);
      assert.deepEqual([stats.active, stats.locked, stats.deferred, stats.scheduled], [1, 1, 1, 1]);
      return 4;
    }

    it("8.1 a count bound keeps the newest dead letters and touches nothing else", async () => {
      s = await factory();
      await s.broker.createQueue("q", { dlqMaxCount: 2, lockDurationMs: 1000 * DAY });
      const live = await liveMessages("q");
      const dead = await deadLetter(s.broker, "q", 5);
      await s.maintain();
      assert.deepEqual(seqs(await s.broker.peek("q", { state: "dead_lettered" })), dead.slice(3));
      assert.equal((await s.broker.stats("q")).total, live + 2);
    });

    it("8.1 an age bound drops dead letters enqueued more than max age ago", async () => {
      s = await factory();
      await s.broker.createQueue("q", { dlqMaxAgeMs: 1000, lockDurationMs: 1000 * DAY });
      const live = await liveMessages("q");
      await deadLetter(s.broker, "q", 2, "old");
      s.clock.advance(500);
      const young = await deadLetter(s.broker, "q", 1, "young");
      s.clock.advance(500);
      await s.maintain();
      assert.equal((await s.broker.stats("q")).deadLettered, 3, "exactly max age is not past it");
      s.clock.advance(1);
      await s.maintain();
      assert.deepEqual(seqs(await s.broker.peek("q", { state: "dead_lettered" })), young);
      assert.equal((await s.broker.stats("q")).total, live + 1);
    });

    it("8.1 a bytes bound drops the oldest dead letters past the cap", async () => {
      s = await factory();
      await s.broker.createQueue("q", { dlqMaxBytes: 10, lockDurationMs: 1000 * DAY });
      const live = await liveMessages("q");
      const dead = await deadLetter(s.broker, "q", 4, "abc");
      await s.maintain();
      assert.deepEqual(
        seqs(await s.broker.peek("q", { state: "dead_lettered" })),
        dead.slice(2),
        "4 + 4 bytes fit under 10, a third would not",
      );
      assert.equal((await s.broker.stats("q")).total, live + 2);
    });

    it("8.2 with no bound (the engine default) nothing is deleted automatically", async () => {
      s = await factory();
      await s.broker.createQueue("q");
      await deadLetter(s.broker, "q", 3);
      s.clock.advance(3650 * DAY);
      await s.maintain();
      assert.equal((await s.broker.stats("q")).deadLettered, 3);
    });

    it("8.3 0 inherits the broker default, >0 is the queue's own bound, <0 is unbounded", async () => {
      s = await factory({ dlqRetention: { maxCount: 1, maxAgeMs: 10 * DAY } });
      await s.broker.createQueue("inherit");
      await s.broker.createQueue("own", { dlqMaxCount: 3, dlqMaxAgeMs: 20 * DAY });
      await s.broker.createQueue("unbounded", { dlqMaxCount: -1, dlqMaxAgeMs: -1 });
      for (const q of ["inherit", "own", "unbounded"]) await deadLetter(s.broker, q, 5);
      await s.maintain();
      const count = async (q: string) => (await s.broker.stats(q)).deadLettered;
      assert.deepEqual([await count("inherit"), await count("own"), await count("unbounded")], [1, 3, 5]);
      s.clock.advance(10 * DAY + 1);
      await s.maintain();
      assert.deepEqual([await count("inherit"), await count("own"), await count("unbounded")], [0, 3, 5]);
      s.clock.advance(10 * DAY);
      await s.maintain();
      assert.deepEqual([await count("inherit"), await count("own"), await count("unbounded")], [0, 0, 5]);
    });

    it("8.3 the bounds are reported as configured", async () => {
      s = await factory();
      await s.broker.createQueue("q", { dlqMaxCount: -5, dlqMaxAgeMs: 7, dlqMaxBytes: 0 });
      const [q] = await s.broker.listQueues();
      assert.ok(q && q.dlqMaxCount < 0, "negative means unbounded");
      assert.equal(q.dlqMaxAgeMs, 7);
      assert.equal(q.dlqMaxBytes, 0);
    });
  });
});
