import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { connect } from "../../src/client/index.js";
import { silentLogger } from "../../src/contract/logger.js";
import { Queue, QueueEvents } from "../../src/jobs/index.js";
import { openBroker } from "../../src/open.js";
import { startServer } from "../../src/server/index.js";
import { collectLines, spawnChild } from "../support/child.js";
import { tempDir } from "../support/temp.js";
import { eventually } from "./helpers.js";

/** Starts a worker process (test/support/job-worker-child.ts); resolves once it is ready. */
async function workerProcess(args: string[]) {
  const child = spawnChild("job-worker-child.ts", args);
  let ready: () => void = () => {};
  const isReady = new Promise<void>((r) => {
    ready = r;
  });
  const done = collectLines(child, (line) => {
    if (line.startsWith("READY")) ready();
  });
  await isReady;
  return {
    pid: child.pid,
    stop: async () => {
      child.kill("SIGTERM");
      await done;
    },
  };
}

/** Collects the events of `listener` as `"<event> <jobId>"`. */
function record(listener: QueueEvents): string[] {
  const seen: string[] = [];
  for (const name of ["job.enqueued", "job.started", "job.completed"] as const) {
    listener.on(name, ({ jobId }) => seen.push(`${name} ${jobId}`));
  }
  return seen;
}

// About worker processes specifically (one on the same SQLite file, one through a served broker):
// these stay as they are; QueueEvents itself runs on every subject in flows-logs-events.test.ts.
describe("QueueEvents: jobs run by another process", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("hears a worker process on the same file", async () => {
    const path = tmp.file("events.db");
    const listener = new QueueEvents({ dbPath: path, pollMs: 20 });
    await listener.waitUntilReady();
    const seen = record(listener);
    const worker = await workerProcess([path]);
    const producer = new Queue({ dbPath: path });
    try {
      const id = await producer.enqueue("work", [5]);
      assert.equal(await producer.result(id, { timeoutMs: 15_000 }), worker.pid);
      // Each process appends its events every 20 ms: the producer's enqueue may land after the
      // worker's completion, so all three are awaited, not the completion alone.
      const heard = [`job.enqueued ${id}`, `job.started ${id}`, `job.completed ${id}`];
      await eventually(() => heard.every((e) => seen.includes(e)), 10_000, "the three events");
      assert.equal(seen.filter((e) => heard.includes(e)).length, 3, "each heard once");
    } finally {
      await worker.stop();
      await producer.close();
      await listener.close();
    }
  });

  it("hears a worker process through a served broker", async () => {
    const embedded = await openBroker(tmp.file("served.db"), { logger: silentLogger });
    const server = await startServer({ broker: embedded, port: 0, logger: silentLogger });
    const client = connect(server.url);
    const listener = new QueueEvents({ broker: client, pollMs: 20 });
    await listener.waitUntilReady();
    const seen = record(listener);
    const worker = await workerProcess(["unused", "--remote", server.url]);
    const producer = new Queue({ broker: client });
    try {
      const id = await producer.enqueue("work", [5]);
      assert.equal(await producer.result(id, { timeoutMs: 15_000 }), worker.pid);
      await eventually(() => seen.includes(`job.completed ${id}`), 10_000, "the completion");
      assert.ok(seen.includes(`job.started ${id}`));
    } finally {
      await worker.stop();
      await producer.close();
      await listener.close();
      await client.close();
      await server.close();
    }
  });
});
