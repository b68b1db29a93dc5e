// A Peek reads messages only up to the one that crosses the 32 MiB answer budget: with 1 MiB
// messages, a Peek of 1,000 read every one of them (a gigabyte for a full page) before the answer
// was cut to 32 MiB. PostgreSQL: test/postgres/peek-budget.test.ts. On SQLite the steps of a large
// Peek are spread over turns of the event loop.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { SqliteClaimOps } from "../../src/store/sqlite/claim.js";
import { assertPeekReadsWithinBudget, spyOnPeek } from "../support/peek-budget.js";
import { tempDir } from "../support/temp.js";
import { countTurns } from "../support/turns.js";

describe("reliability: a Peek reads within the answer budget", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("the store reads up to the message that crosses 32 MiB, in every state or one", async () => {
    const spy = spyOnPeek(SqliteClaimOps);
    const b = await openBroker(tmp.file("peek.db"), {
      background: false,
      logger: silentLogger,
      synchronous: "off",
    });
    try {
      await b.createQueue("q");
      await assertPeekReadsWithinBudget(b, spy.read, 40);
    } finally {
      spy.restore();
      await b.close();
    }
  });

  it("a large Peek lets the event loop turn between its steps, and writes commit between them", async () => {
    const b = await openBroker(tmp.file("turns.db"), {
      background: false,
      logger: silentLogger,
      synchronous: "off",
    });
    // Each step of the read made slow (2 ms), so that the peek's 16 steps outlast a slice of 8 ms
    // on any machine.
    const peek = SqliteClaimOps.prototype.peek;
    SqliteClaimOps.prototype.peek = function (this: SqliteClaimOps, a) {
      const until = performance.now() + 2;
      while (performance.now() < until);
      return peek.call(this, a);
    };
    try {
      await b.createQueue("q");
      const body = Buffer.alloc(1024 * 1024, 7);
      for (let i = 0; i < 40; i++) await b.send("q", { body });
      const turning = countTurns();
      const peeked = b.peek("q", { max: 1000 });
      // A send made while the peek runs is stored before the peek ends.
      let sentFirst = false;
      const sent = b.send("q", { body: "meanwhile" }).then(() => {
        sentFirst = true;
      });
      const got = await peeked;
      const sentBeforePeekEnded = sentFirst;
      const turns = turning.stop();
      await sent;
      assert.equal(got.length, 32);
      assert.ok(turns >= 3, `the loop turned ${turns} times during a peek of 16 slow steps`);
      assert.equal(sentBeforePeekEnded, true, "the send committed between two steps of the peek");
    } finally {
      SqliteClaimOps.prototype.peek = peek;
      await b.close();
    }
  });

  it("Peeks at once share each turn's slice and take turns: one with more to read goes to the back", async () => {
    const b = await openBroker(tmp.file("shared.db"), {
      background: false,
      logger: silentLogger,
      synchronous: "off",
    });
    // Each step made slow (3 ms): a slice of 4 ms holds one or two of them.
    const peek = SqliteClaimOps.prototype.peek;
    const order: string[] = [];
    SqliteClaimOps.prototype.peek = function (this: SqliteClaimOps, a) {
      order.push(a.queue);
      const until = performance.now() + 3;
      while (performance.now() < until);
      return peek.call(this, a);
    };
    try {
      const body = Buffer.alloc(1024 * 1024, 7);
      for (const q of ["a", "b"]) {
        await b.createQueue(q);
        for (let i = 0; i < 12; i++) await b.send(q, { body });
      }
      for (const q of ["c", "d", "e", "f"]) {
        await b.createQueue(q);
        await b.send(q, { body: "one" });
      }
      order.length = 0;
      const turning = countTurns();
      const got = await Promise.all(["a", "b", "c", "d", "e", "f"].map((q) => b.peek(q, { max: 1000 })));
      const turns = turning.stop();
      assert.deepEqual(
        got.map((m) => m.length),
        [12, 12, 1, 1, 1, 1],
      );
      // a and b read 2 MiB a step (six steps each); the one-step reads are not held behind them.
      assert.ok(order.lastIndexOf("a") > order.indexOf("f"), `a finished before f began: ${order.join("")}`);
      assert.ok(order.lastIndexOf("b") > order.indexOf("f"), `b finished before f began: ${order.join("")}`);
      // Six reads of 3 ms steps, 16 steps in all: at most a slice's worth per turn.
      assert.ok(turns >= 8, `the loop turned ${turns} times for 16 steps of 3 ms`);
    } finally {
      SqliteClaimOps.prototype.peek = peek;
      await b.close();
    }
  });
});
