import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { connect } from "../../src/client/index.js";
import { PermissionDeniedError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { Queue } from "../../src/jobs/index.js";
import { openBroker } from "../../src/open.js";
import { startServer } from "../../src/server/index.js";

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
});
