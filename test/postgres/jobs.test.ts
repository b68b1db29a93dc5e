import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { Queue } from "../../src/jobs/index.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

/** The job face on PostgreSQL: a producer on one node, workers on two. */
describe("jobs on the PostgreSQL engine", () => {
  const schema = freshSchema("mqjobs");
  let nodes: PostgresBroker[] = [];

  before(async () => {
    nodes = await Promise.all(
      [0, 1].map(() => PostgresBroker.open(PG_DSN, { schema, logger: silentLogger, poolSize: 4 })),
    );
  });
  after(async () => {
    for (const n of nodes) await n.close();
    await dropSchema(schema);
  });

  it("runs each job once across workers on two nodes, with results and retries", async () => {
    const ran = new Map<number, number>();
    let failedOnce = false;
    const tasks = (q: Queue) =>
      q
        .task("square", (n: number) => {
          ran.set(n, (ran.get(n) ?? 0) + 1);
          return n * n;
        })
        .task(
          "flaky",
          () => {
            if (!failedOnce) {
              failedOnce = true;
              throw new Error("first attempt fails");
            }
            return "ok";
          },
          { maxRetries: 2, retryBackoff: { baseMs: 10, maxMs: 10 } },
        );
    const producer = tasks(new Queue({ broker: nodes[0] }));
    const workerQueues = [tasks(new Queue({ broker: nodes[0] })), tasks(new Queue({ broker: nodes[1] }))];
    const workers = workerQueues.map((q) => q.runWorker({ concurrency: 3 }));
    try {
      const ids = await Promise.all(Array.from({ length: 30 }, (_, n) => producer.enqueue("square", [n])));
      const flaky = await producer.enqueue("flaky", []);
      const results = await Promise.all(ids.map((id) => producer.result(id)));
      assert.deepEqual(
        results,
        Array.from({ length: 30 }, (_, n) => n * n),
      );
      assert.equal(await producer.result(flaky), "ok");
      for (let n = 0; n < 30; n++) assert.equal(ran.get(n), 1, `job ${n} ran once`);
    } finally {
      for (const w of workers) await w.stop();
      for (const q of [producer, ...workerQueues]) await q.close();
    }
  });
});
