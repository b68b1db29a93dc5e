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

  // 1,200 is a long write by its size; 300 (three steps) is one because it takes more than one step.
  for (const total of [1200, 300]) {
    it(`settles ${total} messages ${SETTLE_STEP_ITEMS} a step, the loop turning between steps`, async () => {
      const b = await openBroker(tmp.file(`complete-${total}.db`), {
        background: false,
        logger: silentLogger,
        synchronous: "off",
      });
      const turning = countTurns();
      // Each step made slow (2 ms), so that the steps outlast a slice on any machine.
      const completeBatch = SqliteSettleOps.prototype.completeBatch;
      const steps: { size: number; turns: number }[] = [];
      SqliteSettleOps.prototype.completeBatch = function (this: SqliteSettleOps, a) {
        steps.push({ size: a.items.length, turns: turning.now() });
        const until = performance.now() + 2;
        while (performance.now() < until);
        return completeBatch.call(this, a);
      };
      try {
        await b.createQueue("big", { lockDurationMs: 600_000 });
        await b.send(
          "big",
          Array.from({ length: total }, (_, k) => ({ body: `m${k}` })),
        );
        const locked = [];
        for (;;) {
          const got = await b.receive("big", { maxMessages: 256 });
          if (got.length === 0) break;
          locked.push(...got);
        }
        assert.equal(locked.length, total);
        const results = await b.completeBatch(
          "big",
          locked.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken! })),
        );
        assert.equal(results.filter((r) => r.ok).length, total);
        assert.equal(Math.max(...steps.map((s) => s.size)), SETTLE_STEP_ITEMS);
        assert.equal(steps.length, Math.ceil(total / SETTLE_STEP_ITEMS));
        for (let k = 1; k < steps.length; k++)
          assert.ok(
            steps[k]!.turns > steps[k - 1]!.turns,
            `the loop did not turn between steps ${k} and ${k + 1} (${JSON.stringify(steps)})`,
          );
        assert.equal((await b.stats("big")).total, 0);
      } finally {
        SqliteSettleOps.prototype.completeBatch = completeBatch;
        turning.stop();
        await b.close();
      }
    });
  }
});
