// Deleting a queue of many messages is a long write on SQLite: its messages go 512 a statement,
// the event loop turning between them, so a served broker keeps answering (deleting 80,000
// messages in one statement held a server for 390 ms). Every subject's result:
// test/conformance/cases/queues-admin.case.ts.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { NotFoundError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { SqliteQueueOps } from "../../src/store/sqlite/queue-ops.js";
import { tempDir } from "../support/temp.js";
import { countTurns } from "../support/turns.js";

describe("reliability: deleting a large queue lets the event loop turn", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  for (const drop of ["deleteQueue", "unsubscribe"] as const) {
    it(`${drop}: its messages go in steps, with the loop turning between them`, async () => {
      const b = await openBroker(tmp.file(`${drop}.db`), {
        background: false,
        logger: silentLogger,
        synchronous: "off",
      });
      // Each step made slow (2 ms), so that the ten steps outlast a slice on any machine.
      const deleteMessages = SqliteQueueOps.prototype.deleteMessages;
      let steps = 0;
      SqliteQueueOps.prototype.deleteMessages = function (this: SqliteQueueOps, a) {
        steps++;
        const until = performance.now() + 2;
        while (performance.now() < until);
        return deleteMessages.call(this, a);
      };
      try {
        if (drop === "deleteQueue") await b.createQueue("big");
        else await b.subscribe("t", "big");
        const target = drop === "deleteQueue" ? "big" : "t";
        for (let i = 0; i < 5; i++)
          await b.send(
            target,
            Array.from({ length: 1000 }, (_, k) => ({ body: `m${i}-${k}` })),
          );
        assert.equal((await b.stats("big")).total, 5000);
        const turning = countTurns();
        await (drop === "deleteQueue" ? b.deleteQueue("big") : b.unsubscribe("t", "big"));
        const turns = turning.stop();
        assert.equal(steps, 10, "5,000 messages, 512 a step");
        assert.ok(turns >= 3, `the loop turned ${turns} times during ten slow steps`);
        await assert.rejects(b.stats("big"), NotFoundError);
      } finally {
        SqliteQueueOps.prototype.deleteMessages = deleteMessages;
        await b.close();
      }
    });
  }
});
