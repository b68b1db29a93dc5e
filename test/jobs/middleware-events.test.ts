import assert from "node:assert/strict";
import { it } from "node:test";
import { QueueError, TaskNotRegisteredError } from "../../src/jobs/index.js";
import { eventually, sleep } from "./helpers.js";
import { onEverySubject } from "./subject-queues.js";

onEverySubject("jobs: middleware, events and workers", (s) => {
  it("runs middleware hooks in order around attempts, and onEnqueue may change the job", async () => {
    const t = { queue: s.queue() };
    const log: string[] = [];
    let n = 0;
    const queue = t.queue.task(
      "mw",
      (x: number) => {
        log.push(`handler ${x}`);
        if (++n === 1) throw new Error("again");
        return x * 2;
      },
      { retryBackoff: { baseMs: 5 } },
    );
    queue.use({
      name: "trace",
      onEnqueue(ctx) {
        log.push(`onEnqueue ${ctx.taskName}`);
        ctx.args = [21];
        ctx.options.metadata = "stamped";
      },
      before: async (ctx) => {
        log.push(`before ${ctx.attempt}`);
      },
      after: async (_ctx, result) => {
        log.push(`after ${result}`);
      },
      onError: async (_ctx, err) => {
        log.push(`onError ${(err as Error).message}`);
      },
      onRetry: (e) => log.push(`onRetry ${e.jobId === id}`),
      onCompleted: () => log.push("onCompleted"),
    });
    queue.runWorker();
    const id = await queue.enqueue("mw", [1]);
    assert.equal(await queue.result(id), 42);
    await eventually(() => log.includes("onCompleted"), 2000, "onCompleted");
    assert.deepEqual(log, [
      "onEnqueue mw",
      "before 1",
      "handler 21",
      "onError again",
      "onRetry true",
      "before 2",
      "handler 21",
      "after 42",
      "onCompleted",
    ]);
    assert.equal((await queue.getJob(id))?.metadata, "stamped");
  });

  it("onEnqueue throwing refuses the job; onDeadLetter fires on dead-lettering", async () => {
    const t = { queue: s.queue() };
    const dead: string[] = [];
    const queue = t.queue
      .task(
        "bad",
        () => {
          throw new Error("x");
        },
        { maxRetries: 0 },
      )
      .use({
        onEnqueue(ctx) {
          if (ctx.options.metadata === "refuse") throw new QueueError("refused");
        },
        onDeadLetter: (e) => dead.push(e.jobId),
      });
    await assert.rejects(queue.enqueue("bad", [], { metadata: "refuse" }), /refused/);
    assert.deepEqual(await queue.listJobs(), []);
    queue.runWorker();
    const id = await queue.enqueue("bad", []);
    await eventually(() => dead.length === 1, 3000, "onDeadLetter");
    assert.deepEqual(dead, [id]);
  });

  it("emits job and worker events; listWorkers shows the live workers", async () => {
    const t = { queue: s.queue() };
    const events: string[] = [];
    const queue = t.queue.task("e", () => {});
    for (const e of [
      "job.enqueued",
      "job.completed",
      "worker.started",
      "worker.online",
      "worker.stopped",
    ] as const) {
      queue.on(e, () => events.push(e));
    }
    const worker = queue.runWorker({ queues: ["default", "extra"], concurrency: 3 });
    await eventually(() => events.includes("worker.online"), 3000, "worker.online");
    const [w] = await queue.listWorkers();
    assert.equal(w?.workerId, worker.id);
    assert.deepEqual(w?.queues, ["default", "extra"]);
    assert.equal(w?.concurrency, 3);
    assert.equal(w?.pid, process.pid);
    const id = await queue.enqueue("e", []);
    await queue.result(id);
    await eventually(() => events.includes("job.completed"), 2000, "job.completed");
    await worker.stop();
    await worker.stop();
    assert.deepEqual(await queue.listWorkers(), []);
    assert.deepEqual(events, [
      "worker.started",
      "worker.online",
      "job.enqueued",
      "job.completed",
      "worker.stopped",
    ]);
  });

  it("stop() lets running handlers finish and settle", async () => {
    const t = { queue: s.queue() };
    let finished = 0;
    const queue = t.queue.task("s", async () => {
      await sleep(150);
      finished++;
      return "done";
    });
    const worker = queue.runWorker({ concurrency: 3 });
    const ids = await queue.enqueueMany(
      "s",
      Array.from({ length: 3 }, () => ({ args: [] })),
    );
    await eventually(() => worker.activeCount === 3, 3000, "three running");
    await worker.stop();
    assert.equal(finished, 3);
    for (const id of ids) assert.equal((await queue.getJob(id))?.status, "complete");
  });

  it("a handler can stop its own worker: its job completes and stop() resolves", async () => {
    let stopping: Promise<void> | undefined;
    const ran: number[] = [];
    const queue = s.queue().task("once", (i: number) => {
      ran.push(i);
      // Job 2 starts from the worker's buffer (jobs 1-4 came in one claim) while the loop waits
      // for its one slot: its completion is queued after stop() began.
      if (i === 2) stopping = worker.stop();
      return i;
    });
    const ids = await queue.enqueueMany(
      "once",
      Array.from({ length: 6 }, (_, i) => ({ args: [i] as [number] })),
    );
    const worker = queue.runWorker({ concurrency: 1, batchSize: 4 });
    await eventually(() => stopping !== undefined, 3000, "the handler to stop its worker");
    await stopping;
    assert.deepEqual(ran, [0, 1, 2]);
    for (const [i, id] of ids.entries())
      assert.equal((await queue.getJob(id))?.status, i <= 2 ? "complete" : "pending", `job ${i}`);
  });

  it("a worker reaped for missing heartbeats is reported once as worker.offline", async () => {
    const t = { queue: s.queue() };
    const broker = await t.queue.broker();
    await broker.heartbeat({ workerId: `ghost-${s.namespace}`, queues: ["default"], status: "active" });
    const offline: string[] = [];
    t.queue.on("worker.offline", (e) => offline.push(e.workerId));
    // The ghost's heartbeat is 0 ms old: reap with a stale threshold of 0 through the broker itself.
    await sleep(5);
    const res = await broker.heartbeat(
      { workerId: "probe", queues: [], status: "active" },
      { staleAfterMs: 1 },
    );
    assert.deepEqual(
      res.reaped.map((w) => w.workerId),
      [`ghost-${s.namespace}`],
    );
    await broker.removeWorker("probe");
    assert.deepEqual(offline, []);
  });

  it("a job of a task without a handler here fails with TaskNotRegisteredError", async () => {
    const t = { queue: s.queue() };
    const producer = s.queue({}, await s.second());
    const id = await producer.enqueue("unknown", [1], { maxRetries: 0 });
    t.queue.runWorker();
    await assert.rejects(t.queue.result(id));
    const [err] = await t.queue.getJobErrors(id);
    assert.equal(JSON.parse(err!.error).errtype, TaskNotRegisteredError.name);
    await producer.close();
  });
});
