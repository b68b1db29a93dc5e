import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { connect } from "../../../src/client/index.js";
import { silentLogger } from "../../../src/contract/logger.js";
import { Queue } from "../../../src/jobs/index.js";
import { openBroker } from "../../../src/open.js";
import { startServer } from "../../../src/server/index.js";
import { eventually } from "../helpers.js";

// The job face's topics over a served broker: every pub/sub call is a TopicService RPC.
// About the served broker specifically (topics through a client of a live server); the topic rules
// run on every subject in log.test.ts and pubsub.test.ts.
describe("job topics against a served broker", () => {
  it("subscribers, publish, ephemeral registration, log reads and leases over HTTP", async () => {
    const engine = await openBroker(":memory:", { logger: silentLogger });
    const server = await startServer({ broker: engine, port: 0, logger: silentLogger });
    const client = connect(server.url);
    const seen: number[] = [];
    const queue = new Queue({ broker: client })
      .subscriber("orders", "email", (n: number) => {
        seen.push(n);
      })
      .subscriber("orders", "tail", () => {}, { durable: false });
    try {
      await queue.declareSubscriptions();
      await queue.subscribeLog("orders", "audit");
      const [job] = await queue.publish("orders", [1], { notes: { tenant: "acme" }, priority: 0 });
      assert.deepEqual(JSON.parse(job!.notes!), { subscription: "email", tenant: "acme", topic: "orders" });
      const worker = queue.runWorker({ heartbeatIntervalMs: 50 });
      await eventually(
        async () => (await queue.listSubscriptions("orders")).length === 3,
        5000,
        "tail registered",
      );
      assert.equal((await queue.publish("orders", [2])).length, 2);
      await eventually(() => seen.length === 2, 5000, "both email deliveries");
      const msgs = await queue.readTopic("orders", "audit");
      assert.deepEqual(
        msgs.map((m) => m.args),
        [[1], [2]],
      );
      assert.equal(await queue.ackTopic("orders", "audit", msgs[0]!.id), true);
      await queue.subscribeLog("orders", "leaser");
      await queue.publish("orders", [3]);
      const leased = await queue.leaseTopic("orders", "leaser", { visibility: 10 });
      assert.equal(leased.length, 3);
      assert.equal(await queue.ackMessage("orders", "leaser", leased[0]!.id), true);
      assert.equal(await queue.nackMessage("orders", "leaser", leased[1]!.id), true);
      await queue.declareTopic("declared", { retention: 2 });
      assert.deepEqual(
        (await queue.listDeclaredTopics()).map((d) => [d.name, d.retentionMs]),
        [["declared", 2000]],
      );
      const [audit] = (await queue.topicLogStats()).filter((s) => s.subscription === "audit");
      assert.equal(audit?.lag, 2);
      assert.equal((await queue.topicStats("orders")).length, 2);
      await worker.stop();
      assert.equal(await queue.reapEphemeralSubscriptions(), 0, "fresh rows are spared");
      const kinds = (await client.listSubscriptions()).map((s) => [s.name, s.kind]);
      assert.deepEqual(kinds, [
        ["audit", "log"],
        ["email", "task"],
        ["leaser", "log"],
        ["tail", "task"],
      ]);
    } finally {
      await queue.close();
      await client.close();
      await server.close();
      await engine.close();
    }
  });
});
