import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { connect } from "../../src/client/index.js";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import { currentJob, JobCancelledError, JobFailedError, Queue } from "../../src/jobs/index.js";
import { openBroker } from "../../src/open.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { collectLines, spawnChild } from "../support/child.js";
import { tempDir } from "../support/temp.js";
import { eventually } from "./helpers.js";

// About the served broker specifically (a remote worker, a producer on the served file): the job
// semantics run on the remote subject in the other job test files.
describe("jobs: workers against a served broker", () => {
  const tmp = tempDir();
  let server: RunningServer;
  let client: Broker;
  before(async () => {
    const broker = await openBroker(tmp.file("served.db"), { logger: silentLogger });
    server = await startServer({ broker, port: 0, logger: silentLogger });
    client = connect(server.url);
  });
  after(async () => {
    await client.close();
    await server.close();
    tmp.cleanup();
  });

  it("runs jobs, retries, dead-letters, cancels and reports through the remote broker", async () => {
    let fails = 0;
    const queue = new Queue({ broker: client, namespace: "remote1" })
      .task("mul", (a: number, b: number) => a * b)
      .task(
        "flaky",
        () => {
          if (++fails < 2) throw new Error("once");
          return "ok";
        },
        { retryBackoff: { baseMs: 10 } },
      )
      .task(
        "doomed",
        () => {
          throw new Error("never");
        },
        { maxRetries: 1, retryBackoff: { baseMs: 10 } },
      )
      .task(
        "long",
        () =>
          new Promise((_resolve, reject) => {
            const { signal } = currentJob();
            signal.addEventListener("abort", () => reject(signal.reason));
          }),
      );
    const worker = queue.runWorker({ concurrency: 4, heartbeatIntervalMs: 100 });
    try {
      assert.equal(await queue.result(await queue.enqueue("mul", [6, 7])), 42);
      assert.equal(await queue.result(await queue.enqueue("flaky", [])), "ok");
      const doomed = await queue.enqueue("doomed", [], { notes: { why: "test" } });
      await assert.rejects(queue.result(doomed), JobFailedError);
      assert.equal((await queue.getJobErrors(doomed)).length, 2);
      assert.equal((await queue.deadLetters())[0]?.id, doomed);
      const long = await queue.enqueue("long", []);
      await eventually(async () => (await queue.getJob(long))?.status === "running", 5000, "running");
      assert.equal(await queue.requestCancel(long), true);
      await assert.rejects(queue.result(long), JobCancelledError);
      const ids = await queue.enqueueMany(
        "mul",
        Array.from({ length: 50 }, (_, i) => ({ args: [i, 2] as [number, number] })),
      );
      for (const [i, id] of ids.entries()) assert.equal(await queue.result(id), i * 2);
      const stats = await queue.stats();
      assert.equal(stats.completed, 52);
      assert.equal(stats.dead, 1);
      assert.equal(stats.cancelled, 1);
      assert.equal((await queue.listWorkers())[0]?.workerId, worker.id);
    } finally {
      await queue.close();
    }
  });

  it("a worker process on another 'machine' (connected by URL) runs a local producer's jobs", async () => {
    const producer = new Queue({ dbPath: tmp.file("served.db") });
    const child = spawnChild("job-worker-child.ts", ["-", "--remote", server.url]);
    const lines: string[] = [];
    const done = collectLines(child, (l) => lines.push(l));
    const remote = new Queue({ broker: client });
    const id = await producer.enqueue("work", [1]);
    try {
      const pid = await remote.result(id, { timeoutMs: 20_000 });
      assert.equal(typeof pid, "number");
      assert.notEqual(pid, process.pid);
      assert.ok(lines.some((l) => l.startsWith(`START ${id}`)));
    } finally {
      child.kill("SIGTERM");
      await done;
      await producer.close();
      await remote.close();
    }
  });
});
