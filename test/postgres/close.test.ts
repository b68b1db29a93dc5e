// Closing a PostgreSQL broker right after writes: the notifications of its last commits are sent
// before the connection that sends them is ended, so closing logs no failure.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { captureLogger } from "../support/capture-logger.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

describe("PostgreSQL: closing after writes", () => {
  const schema = freshSchema("mqclose");
  after(() => dropSchema(schema));

  it("sends the last commits' notifications before it ends their connection", async () => {
    const logger = captureLogger();
    for (let round = 0; round < 5; round++) {
      const b = await PostgresBroker.open(PG_DSN, { schema, background: false, logger });
      await b.createQueue(`q${round}`);
      // Each send commits and notifies the other nodes; the broker closes while they are sent.
      await Promise.all(Array.from({ length: 20 }, (_, i) => b.send(`q${round}`, { body: `m${i}` })));
      await b.close();
    }
    assert.deepEqual(logger.problems(), []);
  });
});
