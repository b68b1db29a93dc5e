import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { connect } from "../../src/client/index.js";
import { PermissionDeniedError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { Queue } from "../../src/jobs/index.js";
import { openBroker } from "../../src/open.js";
import { startServer } from "../../src/server/index.js";
import { eventually } from "../support/eventually.js";

describe("the job face over a served broker with scoped tokens", () => {
  it("a producer with send+monitor and a worker with listen+monitor run a job end to end", async () => {
    const broker = await openBroker(":memory:", { logger: silentLogger });
    const server = await startServer({
      broker,
      port: 0,
      logger: silentLogger,
      tokens: ["admin:adm", "shop:prod=send:images+monitor", "resizer:work=listen:images+monitor"],
    });
    const admin = connect(server.url, { token: "adm" });
    const producer = new Queue({ broker: connect(server.url, { token: "prod" }) }).task(
      "resize",
      (url: string) => url,
    );
    const worker = new Queue({ broker: connect(server.url, { token: "work" }) }).task(
      "resize",
      (url: string) => `resized ${url}`,
    );
    try {
      await admin.createQueue("images");
      worker.runWorker({ concurrency: 1, queues: ["images"] });
      const id = await producer.enqueue("resize", ["a.png"], { queue: "images" });
      assert.equal(await producer.result(id, { timeoutMs: 20_000 }), "resized a.png");
      await assert.rejects(producer.enqueue("resize", ["b.png"], { queue: "other" }), PermissionDeniedError);
    } finally {
      await worker.close();
      await producer.close();
      await admin.close();
      await server.close();
    }
  });

  it("promote needs send on the job's queue; removing a job needs manage", async () => {
    const broker = await openBroker(":memory:", { logger: silentLogger });
    const server = await startServer({
      broker,
      port: 0,
      logger: silentLogger,
      tokens: ["admin:adm", "shop:prod=send:images+monitor", "other:stranger=send:other+monitor"],
    });
    const admin = new Queue({ broker: connect(server.url, { token: "adm" }) });
    const producer = new Queue({ broker: connect(server.url, { token: "prod" }) });
    const stranger = new Queue({ broker: connect(server.url, { token: "stranger" }) });
    try {
      await (await admin.broker()).createQueue("images");
      const id = await producer.enqueue("resize", ["a.png"], { queue: "images", delayMs: 3_600_000 });
      await assert.rejects(
        stranger.promote(id),
        PermissionDeniedError,
        "send on another queue is not enough",
      );
      assert.equal((await producer.getJob(id))?.status, "pending");
      await producer.promote(id);
      const job = await producer.getJob(id);
      assert.ok(job && job.scheduledAt <= Date.now(), "promoted: due now");
      await assert.rejects(producer.removeJob(id), PermissionDeniedError, "removing takes manage");
      await admin.removeJob(id);
      assert.equal(await admin.getJob(id), null);
    } finally {
      await stranger.close();
      await producer.close();
      await admin.close();
      await server.close();
    }
  });

  it("metrics are counted by a worker's token and read with monitor; a debounced send needs send on its queue", async () => {
    const broker = await openBroker(":memory:", { logger: silentLogger });
    const server = await startServer({
      broker,
      port: 0,
      logger: silentLogger,
      tokens: [
        "admin:adm",
        "shop:prod=send:images+monitor",
        "resizer:work=listen:images",
        "blind:bl=send:images",
      ],
    });
    const admin = connect(server.url, { token: "adm" });
    const debounced = { debounce: 50, debounceKey: "one", debounceMaxWait: 100 } as const;
    const producer = new Queue({ broker: connect(server.url, { token: "prod" }) }).task(
      "resize",
      () => {},
      debounced,
    );
    const worker = new Queue({ broker: connect(server.url, { token: "work" }) }).task("resize", () => "ok");
    const blind = new Queue({ broker: connect(server.url, { token: "bl" }) });
    try {
      await admin.createQueue("images");
      worker.runWorker({ concurrency: 1, queues: ["images"] });
      const id = await producer.enqueue("resize", [], { queue: "images" });
      assert.equal(await producer.result(id, { timeoutMs: 20_000 }), "ok");
      await eventually(
        async () => (await producer.getMetrics("completed", { queue: "images" })).count === 1,
        10_000,
        "the worker's count",
      );
      await assert.rejects(blind.getMetrics("completed", { queue: "images" }), PermissionDeniedError);
      await assert.rejects(producer.enqueue("resize", [], { queue: "other" }), PermissionDeniedError);
    } finally {
      await worker.close();
      await producer.close();
      await blind.close();
      await admin.close();
      await server.close();
    }
  });
});
