// A Peek reads messages only up to the one that crosses the 32 MiB answer budget: with 1 MiB
// messages, a Peek of 1,000 read every one of them (a gigabyte for a full page) before the answer
// was cut to 32 MiB. PostgreSQL: test/postgres/peek-budget.test.ts.
import { after, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { SqliteClaimOps } from "../../src/store/sqlite/claim.js";
import { assertPeekReadsWithinBudget, spyOnPeek } from "../support/peek-budget.js";
import { tempDir } from "../support/temp.js";

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
});
