// ReadTopic and LeaseTopic stop after the message that crosses the 32 MiB answer budget on
// PostgreSQL as on SQLite (test/reliability/answer-budget.test.ts); PostgreSQL answered every
// message up to the limit.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

const MiB = 1024 * 1024;
const N = 34;

describe("PostgreSQL: topic reads and leases have the 32 MiB answer budget", () => {
  const schema = freshSchema("mqbudget");
  after(() => dropSchema(schema));

  it("ReadTopic and LeaseTopic stop after the message that crosses it", async () => {
    const b = await PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger });
    try {
      await b.subscribeLog("t", "audit");
      const body = Buffer.alloc(MiB, 7);
      for (let i = 0; i < N; i++) await b.publish("t", { body });
      const read = await b.readTopic("t", "audit", { limit: 1000 });
      assert.equal(read.length, 32, "32 MiB, the 32nd crossing it");
      assert.equal((await b.readTopic("t", "audit", { limit: 5 })).length, 5, "the limit first");
      const leased = await b.leaseTopic("t", "audit", { limit: 1000 });
      assert.equal(leased.length, 32);
      const rest = await b.leaseTopic("t", "audit", { limit: 1000 });
      assert.equal(rest.length, N - 32, "the others were not leased");
    } finally {
      await b.close();
    }
  });
});
