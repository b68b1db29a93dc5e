// A large CompleteBatch is a long write on SQLite: its messages are settled SETTLE_STEP_ITEMS a step
// (each message its own statements there), the event loop turning between steps, so a served
// broker keeps answering (a step of 512 held a server for 20-30 ms). Every subject's result:
// test/conformance/cases/settlement.case.ts.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { SETTLE_STEP_ITEMS } from "../../src/core/port.js";
import { openBroker } from "../../src/open.js";
import { SqliteSettleOps } from "../../src/store/sqlite/settle.js";
import { tempDir } from "../support/temp.js";
import { countTurns } from "../support/turns.js";

describe("reliability: a large CompleteBatch lets the event loop turn", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it(`settles ${SETTLE_STEP_ITEMS} messages a step, with the loop turning between steps`, async () => {
    const b = await openBroker(tmp.file("complete.db"), {
      background: false,
      logger: silentLogger,
      synchronous: "off",
    });
    // Each step made slow (2 ms), so that the steps outlast a slice on any machine.
    const completeBatch = SqliteSettleOps.prototype.completeBatch;
    const sizes: number[] = [];
    SqliteSettleOps.prototype.completeBatch = function (this: SqliteSettleOps, a) {
      sizes.push(a.items.length);
      const until = performance.now() + 2;
      while (performance.now() < until);
      return completeBatch.call(this, a);
    };
    try {
      await b.createQueue("big", { lockDurationMs: 600_000 });
      await b.send(
        "big",
        Array.from({ length: 1200 }, (_, k) => ({ body: `m${k}` })),
      );
      const locked = [];
      for (;;) {
        const got = await b.receive("big", { maxMessages: 256 });
        if (got.length === 0) break;
        locked.push(...got);
      }
      assert.equal(locked.length, 1200);
      const turning = countTurns();
      const results = await b.completeBatch(
        "big",
        locked.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken! })),
      );
      const turns = turning.stop();
      assert.equal(results.filter((r) => r.ok).length, 1200);
      assert.equal(Math.max(...sizes), SETTLE_STEP_ITEMS);
      assert.equal(sizes.length, Math.ceil(1200 / SETTLE_STEP_ITEMS));
      assert.ok(turns >= 3, `the loop turned ${turns} times during ${sizes.length} slow steps`);
      assert.equal((await b.stats("big")).total, 0);
    } finally {
      SqliteSettleOps.prototype.completeBatch = completeBatch;
      await b.close();
    }
  });
});
