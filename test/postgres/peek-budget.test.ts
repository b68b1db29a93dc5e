// A Peek reads messages only up to the one that crosses the 32 MiB answer budget on PostgreSQL as on
// SQLite (test/reliability/peek-budget.test.ts): the query fetched every row up to the count.
import { after, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { PgClaimOps } from "../../src/store/postgres/claim.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { assertPeekReadsWithinBudget, spyOnPeek } from "../support/peek-budget.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

describe("PostgreSQL: a Peek reads within the answer budget", () => {
  const schema = freshSchema("mqpeek");
  after(() => dropSchema(schema));

  it("the query returns up to the message that crosses 32 MiB, in every state or one", async () => {
    const spy = spyOnPeek(PgClaimOps);
    const b = await PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger });
    try {
      await b.createQueue("q");
      await assertPeekReadsWithinBudget(b, spy.read, 34);
    } finally {
      spy.restore();
      await b.close();
    }
  });
});
