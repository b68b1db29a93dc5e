import assert from "node:assert/strict";
import { it } from "node:test";
import { currentJob, JobCancelledError } from "../../src/jobs/index.js";
import { eventually, sleep } from "./helpers.js";
import { onEverySubject } from "./subject-queues.js";

onEverySubject("jobs: cancellation, rate limits and concurrency caps", (s) => {
  it("cancels a pending job; a running one is not cancelled by cancelJob", async () => {
    const t = { queue: s.queue() };
    const queue = t.queue.task("c", () => "ran");
    const cancelled: string[] = [];
    queue.on("job.cancelled", (e) => cancelled.push(e.jobId));
    const id = await queue.enqueue("c", [], { delayMs: 60_000 });
    assert.equal(await queue.cancelJob(id), true);
    assert.equal(await queue.cancelJob(id), false);
    assert.equal((await queue.getJob(id))?.status, "cancelled");
    assert.deepEqual(cancelled, [id]);
    await assert.rejects(queue.result(id), JobCancelledError);
    assert.equal((await queue.stats()).cancelled, 1);
    assert.equal(await queue.cancelJob("123456"), false);
  });

  it("requestCancel aborts a running handler's signal; the job ends cancelled", async () => {
    const t = { queue: s.queue() };
    let started: () => void = () => {};
    const running = new Promise<void>((r) => {
      started = r;
    });
    let reason: unknown;
    const queue = t.queue.task(
      "long",
      () =>
        new Promise((resolve, reject) => {
          const { signal } = currentJob();
          signal.addEventListener("abort", () => {
            reason = signal.reason;
            reject(signal.reason);
          });
          started();
          setTimeout(resolve, 10_000).unref();
        }),
    );
    queue.runWorker();
    const id = await queue.enqueue("long", []);
    await running;
    assert.equal(await queue.cancelJob(id), false, "cancelJob is for pending jobs");
    assert.equal(await queue.requestCancel(id), true);
    await assert.rejects(queue.result(id), JobCancelledError);
    assert.ok(reason instanceof JobCancelledError);
    assert.equal((await queue.getJob(id))?.status, "cancelled");
  });

  it("a cancel requested from another process reaches the handler through the heartbeat", async () => {
    const t = { queue: s.queue() };
    let started: () => void = () => {};
    const running = new Promise<void>((r) => {
      started = r;
    });
    const queue = t.queue.task(
      "long",
      () =>
        new Promise((_resolve, reject) => {
          const { signal } = currentJob();
          signal.addEventListener("abort", () => reject(signal.reason));
          started();
        }),
    );
    queue.runWorker({ heartbeatIntervalMs: 50 });
    const id = await queue.enqueue("long", []);
    await running;
    // Another Queue (think: another process) has no local handle on the running job.
    const { Queue: Q } = await import("../../src/jobs/index.js");
    const elsewhere = new Q({ broker: await s.second(), namespace: s.namespace });
    assert.equal(await elsewhere.requestCancel(id), true);
    assert.equal(await elsewhere.isCancelRequested(id), true);
    await assert.rejects(queue.result(id, { timeoutMs: 5000 }), JobCancelledError);
  });

  it("rate-limited jobs wait without spending retries", async () => {
    const t = { queue: s.queue() };
    const starts: number[] = [];
    const queue = t.queue.task(
      "limited",
      () => {
        starts.push(Date.now());
      },
      { rateLimit: "5/s", maxRetries: 0 },
    );
    queue.runWorker({ concurrency: 8 });
    const ids = await queue.enqueueMany(
      "limited",
      Array.from({ length: 8 }, () => ({ args: [] })),
    );
    for (const id of ids) await queue.result(id, { timeoutMs: 10_000 });
    assert.equal(starts.length, 8);
    const span = Math.max(...starts) - Math.min(...starts);
    assert.ok(span >= 400, `the three over the burst of 5 waited for tokens (${span} ms)`);
    for (const id of ids) {
      const job = await queue.getJob(id);
      assert.equal(job?.status, "complete");
      assert.equal(job?.retryCount, 0, "no retry was spent");
    }
  });

  it("maxConcurrent caps running jobs across workers", async () => {
    const t = { queue: s.queue() };
    let now = 0;
    let peak = 0;
    const handler = async () => {
      now++;
      peak = Math.max(peak, now);
      await sleep(30);
      now--;
    };
    const queue = t.queue.task("capped", handler, { maxConcurrent: 2 });
    const second = s.queue({}, await s.second()).task("capped", handler, { maxConcurrent: 2 });
    queue.runWorker({ concurrency: 8 });
    second.runWorker({ concurrency: 8 });
    const ids = await queue.enqueueMany(
      "capped",
      Array.from({ length: 12 }, () => ({ args: [] })),
    );
    for (const id of ids) await queue.result(id, { timeoutMs: 10_000 });
    assert.ok(peak <= 2, `peak ${peak}`);
    assert.equal(peak, 2);
    await second.close();
  });

  it("currentJob reports progress", async () => {
    const t = { queue: s.queue() };
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const queue = t.queue.task("p", async () => {
      await currentJob().setProgress(40);
      await gate;
      return currentJob().attempt;
    });
    queue.runWorker();
    const id = await queue.enqueue("p", []);
    await eventually(async () => (await queue.getJob(id))?.progress === 40, 3000, "progress");
    assert.equal((await queue.getJob(id))?.status, "running");
    release();
    assert.equal(await queue.result(id), 1);
  });
});
