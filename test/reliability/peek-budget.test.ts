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
});
