import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { Queue } from "../../src/jobs/index.js";
import { eventually } from "../jobs/helpers.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

/** Job topics through `new Queue({ dsn })` on PostgreSQL: fan-out, a log consumer, two queues sharing the schema. */
describe("job topics on the PostgreSQL engine (new Queue({ dsn }))", () => {
  const schema = freshSchema("mqtopics");
  after(() => dropSchema(schema));

  it("fans out, isolates a failing subscriber, and feeds a log consumer", async () => {
    const got: string[] = [];
    const consumer = new Queue({ dsn: PG_DSN, schema })
      .subscriber("orders", "email", (n: number) => {
        got.push(`email ${n}`);
      })
      .subscriber(
        "orders",
        "broken",
        () => {
          throw new Error("no");
        },
        { maxRetries: 0 },
      )
      .logConsumer(
        "orders",
        "audit",
        (n: number) => {
          got.push(`audit ${n}`);
        },
        { pollIntervalMs: 20 },
      );
    await consumer.declareSubscriptions();
    const producer = new Queue({ dsn: `${PG_DSN}`, schema });
    try {
      const status = await (await producer.broker()).status();
      assert.equal(status.backend, "postgres");
      const jobs = await producer.publish("orders", [42], { idempotencyKey: "k" });
      assert.equal(jobs.length, 2);
      assert.deepEqual(
        (await producer.publish("orders", [42], { idempotencyKey: "k" })).map((j) => j.id),
        jobs.map((j) => j.id),
      );
      consumer.runWorker({ concurrency: 2 });
      await eventually(() => got.length === 3, 15_000, "email and two audit reads");
      assert.deepEqual(got.sort(), ["audit 42", "audit 42", "email 42"]);
      await eventually(
        async () =>
          (await producer.topicStats("orders")).find((s) => s.subscription === "broken")?.dead === 1,
        10_000,
        "the broken delivery dead",
      );
      await producer.result(jobs.find((j) => j.taskName === "email")!.id);
      const email = (await producer.topicStats("orders")).find((s) => s.subscription === "email");
      assert.deepEqual([email?.pending, email?.running, email?.dead], [0, 0, 0]);
      await eventually(async () => (await producer.topicLogStats())[0]?.lag === 0, 10_000, "caught up");
    } finally {
      await producer.close();
      await consumer.close();
    }
  });
});
