import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("PostgreSQL: the elected node's reaper", () => {
  const schema = freshSchema("mqreap");
  let broker: PostgresBroker | undefined;
  after(async () => {
    await broker?.close();
    await dropSchema(schema);
  });

  it("returns a lapsed lease's message as it lapses, not at its next period", async () => {
    broker = await PostgresBroker.open(PG_DSN, {
      schema,
      logger: silentLogger,
      leaderPollMs: 100,
      poolSize: 3,
    });
    for (let i = 0; !broker.isLeader; i++) {
      if (i > 100) throw new Error("never elected");
      await sleep(50);
    }
    // Leases of 1.5 s: a reap within the next second sees each one and arms for its end.
    await broker.createQueue("q", { lockDurationMs: 1500, maxDeliveryCount: 100 });
    await broker.send("q", { body: "x" });
    let [m] = await broker.receive("q");
    assert.ok(m);
    for (let round = 2; round <= 3; round++) {
      // The lease has 1.5 s left; a reaper running only every second would miss this wait often.
      [m] = await broker.receive("q", { waitMs: 1800 });
      assert.equal(m?.deliveryCount, round, `delivery ${round} came back within the wait`);
    }
  });
});
