import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { InvalidArgumentError } from "../../../src/contract/errors.js";
import { MAX_SEQ_NUMBERS_PER_CALL } from "../../../src/contract/limits.js";
import { fails, receiveOne } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

// Retention by count and subject (deleteSettled's keepNewest and subject), promotion of scheduled
// messages and removal of unlocked ones: what the job face's keepCompleted / keepDead, promote,
// removeJob and retryJob are built on.
cases((factory) => {
  describe("§J10 retention by count, promotion and removal", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000, maxDeliveryCount: 1 });
    });
    afterEach(() => s.close());

    /** Sends and completes (kept) one message of `subject`; a tick passes after each. */
    async function completed(subject: string): Promise<number> {
      const [seq] = await s.broker.send("q", { body: "x", subject });
      const m = await receiveOne(s.broker, "q");
      assert.equal(m.seqNumber, seq);
      await s.broker.complete("q", m.seqNumber, m.lockToken, { retainMs: 3_600_000 });
      s.clock.advance(10);
      return seq!;
    }

    it("J10.1 keepNewest keeps the latest settled of one subject and deletes the others", async () => {
      const a = [await completed("a"), await completed("a"), await completed("a"), await completed("a")];
      const b = [await completed("b"), await completed("b")];
      const base = { states: ["completed" as const], subject: "a" };
      assert.equal(await s.broker.deleteSettled("q", { ...base, keepNewest: 2 }), 2);
      const left = async () =>
        (await s.broker.browse({ queues: ["q"], states: ["completed"] })).map((r) => r.seqNumber).sort();
      assert.deepEqual(
        await left(),
        [...a.slice(2), ...b].sort((x, y) => x - y),
      );
      assert.equal(await s.broker.deleteSettled("q", { ...base, keepNewest: 2 }), 0, "idempotent");
      assert.equal(await s.broker.deleteSettled("q", { ...base, keepNewest: 0 }), 2, "0 keeps none");
      assert.deepEqual(
        await left(),
        b.sort((x, y) => x - y),
        "the other subject is untouched",
      );
      await fails(s.broker.deleteSettled("q", { keepNewest: -1 }), InvalidArgumentError, "invalid_argument");
      await fails(s.broker.deleteSettled("q", { keepNewest: 1.5 }), InvalidArgumentError, "invalid_argument");
    });

    it("J10.1b deleteSettled refuses options it cannot read exactly and deletes nothing", async () => {
      const kept = [await completed("a"), await completed("a")];
      const bad: [string, object][] = [
        [
          "a list over the cap",
          { seqNumbers: Array.from({ length: MAX_SEQ_NUMBERS_PER_CALL + 1 }, (_, i) => i + 1) },
        ],
        ["a number that is not one", { seqNumbers: [kept[0], "1"] }],
        ["a fractional age", { olderThanMs: 1.5 }],
        ["an age that is not a number", { olderThanMs: "0" }],
        ["a subject that is not a string", { subject: 7 }],
        ["states that are not a list", { states: "completed" }],
      ];
      for (const [what, options] of bad) {
        await fails(
          s.broker.deleteSettled("q", options as never),
          InvalidArgumentError,
          "invalid_argument",
          what,
        );
      }
      assert.deepEqual(
        (await s.broker.getMessages(kept)).map((r) => r.state),
        ["completed", "completed"],
      );
      assert.equal(
        await s.broker.deleteSettled("q", {
          seqNumbers: Array.from({ length: MAX_SEQ_NUMBERS_PER_CALL }, (_, i) => kept[0]! + i),
        }),
        2,
        "a list at the cap is taken",
      );
    });

    it("J10.1c keepNewest breaks a tie of settlement time by number: the higher ones are kept", async () => {
      const seqs = await s.broker.send(
        "q",
        Array.from({ length: 5 }, (_, k) => ({ body: `t${k}`, subject: "t" })),
      );
      const got = await s.broker.receive("q", { maxMessages: 5 });
      assert.equal(got.length, 5);
      // One clock reading for all five: their settlement times are equal.
      for (const m of got.reverse())
        await s.broker.complete("q", m.seqNumber, m.lockToken!, { retainMs: 3_600_000 });
      assert.equal(await s.broker.deleteSettled("q", { subject: "t", keepNewest: 2 }), 3);
      const left = (await s.broker.getMessages(seqs)).map((r) => r.seqNumber).sort((x, y) => x - y);
      assert.deepEqual(left, seqs.slice(3));
    });

    it("J10.2 subject and olderThanMs combine: only that subject's older ones go", async () => {
      const old = await completed("a");
      const oldB = await completed("b");
      s.clock.advance(5000);
      const young = await completed("a");
      const n = await s.broker.deleteSettled("q", { states: ["completed"], subject: "a", olderThanMs: 1000 });
      assert.equal(n, 1);
      const left = (await s.broker.getMessages([old, oldB, young])).map((r) => r.seqNumber);
      assert.deepEqual(left.sort(), [oldB, young].sort());
    });

    it("J10.3 promoteMessages makes scheduled messages (a delay, a backoff) claimable now, nothing else", async () => {
      const [later] = await s.broker.schedule("q", { body: "later" }, s.clock.now() + 3_600_000);
      const [now] = await s.broker.send("q", { body: "now" });
      assert.equal(await s.broker.promoteMessages("q", [later!, now!, 999_999]), 1);
      const [rec] = await s.broker.getMessages([later!]);
      assert.equal(rec?.state, "active");
      const got = await s.broker.receive("q", { maxMessages: 2 });
      assert.deepEqual(got.map((m) => m.seqNumber).sort(), [later!, now!].sort());
      assert.equal(await s.broker.promoteMessages("other-queue", [later!]), 0, "the queue must match");
      await fails(
        s.broker.promoteMessages(
          "q",
          Array.from({ length: MAX_SEQ_NUMBERS_PER_CALL + 1 }, (_, i) => i + 1),
        ),
        InvalidArgumentError,
        "invalid_argument",
      );
    });

    it("J10.4 removeMessages deletes waiting and settled messages, never a locked one, and wakes awaitSettled", async () => {
      const done = await completed("c");
      const [waiting] = await s.broker.schedule("q", { body: "w" }, s.clock.now() + 3_600_000);
      const [held] = await s.broker.send("q", { body: "h" });
      const lock = await receiveOne(s.broker, "q");
      assert.equal(lock.seqNumber, held);
      const settled = s.broker.awaitSettled([waiting!], { waitMs: 5000 });
      assert.equal(await s.broker.removeMessages("q", [waiting!, held!, done]), 2);
      assert.deepEqual(await settled, [waiting]);
      assert.deepEqual(
        (await s.broker.getMessages([waiting!, held!, done])).map((r) => [r.seqNumber, r.state]),
        [[held, "locked"]],
      );
      await s.broker.complete("q", held!, lock.lockToken!);
      await fails(
        s.broker.removeMessages(
          "q",
          Array.from({ length: MAX_SEQ_NUMBERS_PER_CALL + 1 }, (_, i) => i + 1),
        ),
        InvalidArgumentError,
        "invalid_argument",
      );
    });
  });
});
