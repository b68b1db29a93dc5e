import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { InvalidArgumentError } from "../../src/contract/errors.js";
import {
  MAX_METRIC_INCREMENTS_PER_CALL,
  MAX_NAME_LIST,
  METRIC_BUCKET_MS,
  METRICS_RETENTION_MS,
} from "../../src/contract/limits.js";
import { Queue, QueueError, QueueFullError } from "../../src/jobs/index.js";
import { JOB_BROKER_SUBJECTS, type JobBroker } from "./broker-subjects.js";
import { eventually, sleep } from "./helpers.js";

for (const subject of JOB_BROKER_SUBJECTS) {
  describe(`jobs: metrics, maxPending and debounce (${subject.name})`, () => {
    let b: JobBroker;
    let n = 0;
    const queueOn = (broker = b.broker, namespace = `ns${n}`) => new Queue({ broker, namespace });
    before(async () => {
      b = await subject.open();
    });
    after(() => b.close());

    // --- metrics ---------------------------------------------------------------------------------

    it("counts completed and failed jobs per minute, from workers on two brokers of one store", async () => {
      n++;
      const define = (q: Queue) =>
        q
          .task("ok", (x: number) => x)
          .task("boom", () => {
            throw new Error("boom");
          });
      const one = define(queueOn());
      const two = define(queueOn(await b.second()));
      const w1 = one.runWorker({ queues: ["default", "other"] });
      const w2 = two.runWorker({ queues: ["default", "other"] });
      const before = Date.now();
      for (let i = 0; i < 3; i++) await one.enqueue("ok", [i]);
      for (let i = 0; i < 2; i++) await two.enqueue("ok", [i], { queue: "other" });
      await one.enqueue("boom", [], { maxRetries: 0 });
      await eventually(async () => (await one.getMetrics("completed")).count === 5, 10_000, "5 completions");
      await eventually(async () => (await two.getMetrics("failed")).count === 1, 10_000, "1 failure");
      const completed = await two.getMetrics("completed");
      assert.equal(completed.count, 5);
      assert.equal(
        completed.data.reduce((s, p) => s + p.count, 0),
        5,
      );
      for (const p of completed.data) {
        assert.equal(p.minute % METRIC_BUCKET_MS, 0);
        assert.ok(p.minute >= before - METRIC_BUCKET_MS && p.minute <= Date.now(), "a recent minute");
      }
      // One queue, a range, and another namespace.
      assert.equal((await one.getMetrics("completed", { queue: "other" })).count, 2);
      assert.equal(
        (await one.getMetrics("completed", { from: before - 3_600_000, to: before - METRIC_BUCKET_MS }))
          .count,
        0,
      );
      assert.equal((await queueOn(b.broker, `other${n}`).getMetrics("completed")).count, 0);
      await w1.stop();
      await w2.stop();
      await one.close();
      await two.close();
    });

    it("refuses bad metric ranges and kinds, and bounds increments", async () => {
      n++;
      const queue = queueOn();
      await queue.enqueue("t");
      const now = Date.now();
      await assert.rejects(queue.getMetrics("completed", { from: now, to: now - 1 }), InvalidArgumentError);
      await assert.rejects(
        queue.getMetrics("completed", { from: now - METRICS_RETENTION_MS - 1, to: now }),
        InvalidArgumentError,
      );
      await assert.rejects(queue.getMetrics("completed", { from: -1, to: 0 }), InvalidArgumentError);
      await assert.rejects(queue.getMetrics("done" as never), InvalidArgumentError);
      // A full 7-day range is allowed.
      assert.equal(
        (await queue.getMetrics("failed", { from: now - METRICS_RETENTION_MS, to: now })).count,
        0,
      );
      const broker = b.broker;
      await assert.rejects(
        broker.addMetrics([{ queue: "q", kind: "completed", count: 0 }]),
        InvalidArgumentError,
      );
      await assert.rejects(
        broker.addMetrics([{ queue: "", kind: "completed", count: 1 }]),
        InvalidArgumentError,
      );
      await assert.rejects(
        broker.addMetrics([{ queue: "q", kind: "nope" as never, count: 1 }]),
        InvalidArgumentError,
      );
      const tooMany = Array.from({ length: MAX_METRIC_INCREMENTS_PER_CALL + 1 }, (_, i) => ({
        queue: `q${i}`,
        kind: "completed" as const,
        count: 1,
      }));
      await assert.rejects(broker.addMetrics(tooMany), InvalidArgumentError);
      await assert.rejects(
        broker.readMetrics("completed", {
          queues: Array.from({ length: MAX_NAME_LIST + 1 }, (_, i) => `q${i}`),
        }),
        InvalidArgumentError,
      );
      // Nothing of the refused calls was counted.
      assert.deepEqual(await broker.readMetrics("completed", { queues: ["q", "q0"] }), []);
      await broker.addMetrics([
        { queue: `m${n}`, kind: "completed", count: 2 },
        { queue: `m${n}`, kind: "completed", count: 3 },
      ]);
      const points = await broker.readMetrics("completed", { queues: [`m${n}`] });
      assert.equal(points.length, 1);
      assert.equal(points[0]!.count, 5);
      await queue.close();
    });

    if (subject.name === "embedded") {
      it("getMetrics sums a namespace of more queues than one read may name", async () => {
        n++;
        const queue = queueOn();
        const names = Array.from({ length: MAX_NAME_LIST + 1 }, (_, i) => `ns${n}::q${i}`);
        for (const name of names) await b.broker.createQueue(name);
        await b.broker.addMetrics([
          { queue: names[0]!, kind: "completed", count: 2 },
          { queue: names[MAX_NAME_LIST]!, kind: "completed", count: 3 },
        ]);
        const metrics = await queue.getMetrics("completed");
        assert.equal(metrics.count, 5);
        assert.equal(metrics.data.length, 1);
        await queue.close();
      });
    }

    // --- maxPending ------------------------------------------------------------------------------

    it("maxPending refuses enqueues past the cap with QueueFullError, counting every broker's jobs", async () => {
      n++;
      const queue = queueOn().configureQueue("capped", { maxPending: 2 });
      const other = queueOn(await b.second()).configureQueue("capped", { maxPending: 3 });
      await queue.enqueue("t", [], { queue: "capped" });
      await other.enqueue("t", [], { queue: "capped" });
      const err = await queue.enqueue("t", [], { queue: "capped" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof QueueFullError, String(err));
      assert.ok(err instanceof QueueError);
      assert.equal(err.queue, "capped");
      assert.equal(err.pending, 2);
      assert.equal(err.cap, 2);
      assert.match(err.message, /queue 'capped' is full: 2 pending >= maxPending 2/);
      // The other process's cap is 3: one more fits there, then it is full too.
      await other.enqueue("t", [], { queue: "capped" });
      await assert.rejects(other.enqueue("t", [], { queue: "capped" }), QueueFullError);
      // Delayed jobs wait too; other queues are not capped.
      await queue.enqueue("t", [], { queue: "free", delayMs: 60_000 });
      assert.equal((await queue.statsByQueue("capped")).pending, 3);
      // enqueueMany is all or nothing.
      queue.configureQueue("batch", { maxPending: 3 });
      await queue.enqueueMany("t", [{ options: { queue: "batch" } }, { options: { queue: "batch" } }]);
      await assert.rejects(
        queue.enqueueMany("t", [{ options: { queue: "batch" } }, { options: { queue: "batch" } }]),
        QueueFullError,
      );
      assert.equal((await queue.statsByQueue("batch")).pending, 2);
      // Once a worker drains the queue, it admits again; removing the cap lifts it.
      queue.task("t", () => "done");
      const worker = queue.runWorker({ queues: ["capped"] });
      await eventually(async () => (await queue.statsByQueue("capped")).pending === 0, 10_000, "drained");
      await worker.stop();
      await queue.enqueue("t", [], { queue: "capped" });
      queue.configureQueue("batch", { maxPending: undefined });
      await queue.enqueueMany("t", [{ options: { queue: "batch" } }, { options: { queue: "batch" } }]);
      assert.equal((await queue.statsByQueue("batch")).pending, 4);
      await queue.close();
      await other.close();
    });

    it("configureQueue refuses bad limits", () => {
      const queue = queueOn();
      for (const bad of [0, -1, 1.5, Number.NaN, "3" as never]) {
        assert.throws(() => queue.configureQueue("q", { maxPending: bad }), QueueError);
      }
      assert.throws(() => queue.configureQueue("q", { maxConcurrent: 2 } as never), QueueError);
      assert.throws(() => queue.configureQueue("", { maxPending: 1 }), QueueError);
    });

    // --- debounce --------------------------------------------------------------------------------

    it("debounce collapses a burst per key into one job that runs once, with the first arguments", async () => {
      n++;
      const runs: unknown[] = [];
      const queue = queueOn().task(
        "report",
        (a: { userId: string; n: number }) => {
          runs.push(a);
          return a.n;
        },
        // A window long enough for every step below on a loaded machine: once the job is due, the
        // window has closed and the next enqueue opens another.
        { debounce: "2s", debounceKey: "report:{userId}", debounceMaxWait: "10s" },
      );
      const enqueued: string[] = [];
      queue.on("job.enqueued", (e) => enqueued.push(e.jobId));
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push(await queue.enqueue("report", [{ userId: "u1", n: i }]));
      const u2 = await queue.enqueue("report", [{ userId: "u2", n: 9 }]);
      assert.equal(new Set(ids).size, 1, "one job for u1");
      assert.notEqual(u2, ids[0]);
      assert.deepEqual(enqueued, [ids[0], u2], "job.enqueued once per job");
      // Another broker on the same store (another process) lands in the same window.
      const other = queueOn(await b.second()).task("report", (_a: { userId: string; n: number }) => {}, {
        debounce: 2000,
        debounceKey: "report:{userId}",
        debounceMaxWait: 10_000,
      });
      assert.equal(await other.enqueue("report", [{ userId: "u1", n: 7 }]), ids[0]);
      const job = await queue.getJob(ids[0]!);
      assert.equal(job?.status, "pending");
      const worker = queue.runWorker();
      assert.equal(
        await queue.result(ids[0]!, { timeoutMs: 10_000 }),
        0,
        "the arguments that opened the window",
      );
      assert.equal(await queue.result(u2, { timeoutMs: 10_000 }), 9);
      assert.equal(runs.length, 2);
      // The window closed when its job ran: the next enqueue opens another.
      const next = await queue.enqueue("report", [{ userId: "u1", n: 5 }]);
      assert.notEqual(next, ids[0]);
      assert.equal(await queue.result(next, { timeoutMs: 10_000 }), 5);
      await worker.stop();
      await queue.close();
      await other.close();
    });

    it("debounceReplacePayload runs the latest arguments; per-enqueue fields override the task's", async () => {
      n++;
      const queue = queueOn()
        .task("sync", (id: string, v: number) => `${id}:${v}`, {
          debounce: "200ms",
          debounceKey: "sync:{0}",
          debounceMaxWait: "5s",
          debounceReplacePayload: true,
        })
        .task("plain", (v: number) => v);
      const a = await queue.enqueue("sync", ["x", 1]);
      assert.equal(await queue.enqueue("sync", ["x", 2]), a);
      assert.equal(await queue.enqueue("sync", ["x", 3]), a);
      // A task without debounce defaults debounces one enqueue's worth of fields.
      const p = await queue.enqueue("plain", [1], {
        debounce: 200,
        debounceKey: "all",
        debounceMaxWait: 1000,
        delayMs: 3_600_000,
      });
      assert.equal(
        await queue.enqueue("plain", [2], { debounce: 200, debounceKey: "all", debounceMaxWait: 1000 }),
        p,
      );
      const worker = queue.runWorker();
      assert.equal(await queue.result(a, { timeoutMs: 10_000 }), "x:3");
      // delayMs does not apply to a debounced enqueue: the window sets the run time.
      assert.equal(await queue.result(p, { timeoutMs: 10_000 }), 1);
      await worker.stop();
      await queue.close();
    });

    it("debounceMaxWait bounds how long a steady stream of enqueues postpones the job", async () => {
      n++;
      const started: number[] = [];
      const queue = queueOn().task("tick", () => started.push(Date.now()), {
        debounce: "400ms",
        debounceKey: "tick",
        debounceMaxWait: "800ms",
      });
      const worker = queue.runWorker();
      const ids = new Set<string>();
      const until = Date.now() + 2500;
      while (Date.now() < until) {
        ids.add(await queue.enqueue("tick"));
        await sleep(100);
      }
      // Without the ceiling, one job would still wait; with it, jobs ran during the stream.
      assert.ok(ids.size >= 2, `the stream made ${ids.size} job(s)`);
      await eventually(() => started.length >= 2, 10_000, "two runs");
      await worker.stop();
      await queue.close();
    });

    it("debounce options are checked at registration and at enqueue", async () => {
      n++;
      const queue = queueOn();
      const h = () => {};
      assert.throws(() => queue.task("a", h, { debounce: 100, debounceKey: "k" }), /debounceMaxWait/);
      assert.throws(() => queue.task("a", h, { debounce: 100, debounceMaxWait: 200 }), /debounceKey/);
      assert.throws(
        () => queue.task("a", h, { debounce: 500, debounceKey: "k", debounceMaxWait: 100 }),
        /at least debounce/,
      );
      assert.throws(() => queue.task("a", h, { debounceKey: "k" }), /need debounce/);
      assert.throws(
        () => queue.task("a", h, { debounce: 0, debounceKey: "k", debounceMaxWait: 1 }),
        QueueError,
      );
      assert.throws(
        () => queue.task("a", h, { debounce: "soon" as never, debounceKey: "k", debounceMaxWait: 1 }),
        QueueError,
      );
      queue.task("d", h, { debounce: "1m", debounceKey: "u:{userId}", debounceMaxWait: "1h" });
      await assert.rejects(queue.enqueue("d", [{ other: 1 }]), /matches no argument/);
      await assert.rejects(queue.enqueue("d", [{ userId: "" }]), /is empty/);
      await assert.rejects(queue.enqueue("d", [{ userId: { x: 1 } }]), /a key part is a string/);
      await assert.rejects(queue.enqueue("d", [{ userId: "u" }], { uniqueKey: "k" }), /cannot be combined/);
      await assert.rejects(
        queue.enqueueMany("d", [{ args: [{ userId: "u" }] }]),
        /enqueueMany cannot debounce/,
      );
      await assert.rejects(queue.enqueueFlow({ task: "d", args: [{ userId: "u" }] }), /cannot debounce/);
      queue.task("p", h, { debounce: 100, debounceKey: "p:{1}", debounceMaxWait: 100 });
      await assert.rejects(queue.enqueue("p", ["only one"]), /out of range/);
      // Nothing was stored by the refused enqueues.
      assert.equal((await queue.stats()).pending, 0);
      // The engine checks its own bounds too.
      await assert.rejects(
        b.broker.sendDebounced("nowhere", { body: "x" }, { key: "", windowMs: 1, maxWaitMs: 1 }),
        InvalidArgumentError,
      );
      await assert.rejects(
        b.broker.sendDebounced("nowhere", { body: "x" }, { key: "k", windowMs: 10, maxWaitMs: 5 }),
        InvalidArgumentError,
      );
      await queue.close();
    });
  });
}
