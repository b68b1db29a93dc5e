import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { InvalidArgumentError } from "../../src/contract/errors.js";
import {
  currentJob,
  JobFailedError,
  type JobProgressEvent,
  type JobStartedEvent,
  Queue,
  QueueError,
  QueueEvents,
} from "../../src/jobs/index.js";
import { JOB_BROKER_SUBJECTS, type JobBroker } from "./broker-subjects.js";
import { eventually } from "./helpers.js";

const fast = { retryBackoff: { baseMs: 10, maxMs: 10 } };

for (const subject of JOB_BROKER_SUBJECTS) {
  describe(`jobs: flows, job logs, progress and QueueEvents (${subject.name})`, () => {
    let b: JobBroker;
    let n = 0;
    /** A queue of its own namespace per test, on the subject's broker. */
    const queueOn = (broker = b.broker, namespace = `ns${n}`) => new Queue({ broker, namespace });
    before(async () => {
      b = await subject.open();
    });
    after(() => b.close());

    it("runs a parent after its children, with their results keyed by child id", async () => {
      n++;
      const order: string[] = [];
      const queue = queueOn()
        .task("leaf", (x: number) => {
          order.push(`leaf${x}`);
          return x * 10;
        })
        .task("sum", async () => {
          order.push("sum");
          const results = await currentJob().childResults<number>();
          return Object.values(results).reduce((a, v) => a + v, 0);
        })
        .task("report", async () => {
          order.push("report");
          return currentJob().childResults();
        });
      const flow = await queue.enqueueFlow({
        task: "report",
        children: [
          {
            task: "sum",
            options: { queue: "math" },
            children: [
              { task: "leaf", args: [1] },
              { task: "leaf", args: [2], options: { queue: "math" } },
            ],
          },
        ],
      });
      assert.equal(flow.children.length, 1);
      assert.equal(flow.children[0]!.children.length, 2);
      assert.equal((await queue.getJob(flow.id))?.status, "pending", "a waiting parent is pending");
      const worker = queue.runWorker({ queues: ["default", "math"], concurrency: 4 });
      try {
        const sumId = flow.children[0]!.id;
        assert.deepEqual(await queue.result(flow.id, { timeoutMs: 15_000 }), { [sumId]: 30 });
        const [l1, l2] = flow.children[0]!.children.map((c) => c.id);
        assert.equal(await queue.getResult(l1!), 10);
        assert.equal(await queue.getResult(l2!), 20);
        assert.deepEqual(order.slice(2), ["sum", "report"], "each parent ran after its children");
      } finally {
        await worker.stop();
        await queue.close();
      }
    });

    it("a dead child fails its parent; with failParentOnFailure false the parent runs and is told", async () => {
      n++;
      const ran: string[] = [];
      const queue = queueOn()
        .task(
          "bad",
          () => {
            throw new Error("child broke");
          },
          { maxRetries: 0 },
        )
        .task("good", () => "fine")
        .task("strict", () => {
          ran.push("strict");
        })
        .task("lenient", async () => {
          ran.push("lenient");
          return {
            results: await currentJob().childResults(),
            failures: await currentJob().childFailures(),
          };
        });
      const worker = queue.runWorker({ concurrency: 4 });
      try {
        const strict = await queue.enqueueFlow({
          task: "strict",
          children: [{ task: "bad" }, { task: "good" }],
        });
        await assert.rejects(queue.result(strict.id, { timeoutMs: 15_000 }), (err: unknown) => {
          assert.ok(err instanceof JobFailedError);
          assert.match(String(err.message), new RegExp(`child ${strict.children[0]!.id} failed`));
          return true;
        });
        const lenient = await queue.enqueueFlow({
          task: "lenient",
          children: [{ task: "bad", options: { failParentOnFailure: false } }, { task: "good" }],
        });
        const out = (await queue.result(lenient.id, { timeoutMs: 15_000 })) as {
          results: Record<string, unknown>;
          failures: Record<string, string>;
        };
        const [badId, goodId] = lenient.children.map((c) => c.id);
        assert.deepEqual(out.results, { [goodId!]: "fine" });
        assert.deepEqual(Object.keys(out.failures), [badId]);
        assert.match(out.failures[badId!]!, /child broke/);
        assert.deepEqual(ran, ["lenient"], "the strict parent never ran");
      } finally {
        await worker.stop();
        await queue.close();
      }
    });

    it("cancelling a parent cancels its pending children; bad flows are refused and store nothing", async () => {
      n++;
      const queue = queueOn().task("t", () => 1);
      try {
        const flow = await queue.enqueueFlow({
          task: "t",
          children: [
            { task: "t", children: [{ task: "t" }] },
            { task: "t", options: { delayMs: 60_000 } },
          ],
        });
        assert.equal(await queue.cancelJob(flow.id), true);
        const ids = [flow.id, flow.children[0]!.id, flow.children[0]!.children[0]!.id, flow.children[1]!.id];
        for (const id of ids) assert.equal((await queue.getJob(id))?.status, "cancelled", `job ${id}`);

        // Cancelling a child tells its parent: by default the parent dies with it.
        const second = await queue.enqueueFlow({
          task: "t",
          children: [{ task: "t", options: { delayMs: 60_000 } }],
        });
        assert.equal(await queue.cancelJob(second.children[0]!.id), true);
        const parent = await queue.getJob(second.id);
        assert.equal(parent?.status, "dead");
        const dead = (await queue.deadLetters()).find((d) => d.id === second.id);
        assert.match(dead?.error ?? "", new RegExp(`child ${second.children[0]!.id} was cancelled`));

        const before = (await queue.listJobs({ limit: 1000 })).length;
        let deep: { task: string; children?: unknown[] } = { task: "t" };
        for (let i = 0; i < 32; i++) deep = { task: "t", children: [deep] };
        await assert.rejects(queue.enqueueFlow(deep as never), QueueError);
        await assert.rejects(
          queue.enqueueFlow({ task: "t", options: { delayMs: 5 }, children: [{ task: "t" }] }),
          QueueError,
        );
        await assert.rejects(
          queue.enqueueFlow({ task: "t", children: Array.from({ length: 1000 }, () => ({ task: "t" })) }),
          QueueError,
        );
        assert.equal((await queue.listJobs({ limit: 1000 })).length, before);
      } finally {
        await queue.close();
      }
    });

    it("keeps a job's log lines and progress; job.started and job.progress fire in the worker's process", async () => {
      n++;
      const queue = queueOn().task("work", async () => {
        await currentJob().log("starting");
        await currentJob().updateProgress(40);
        await currentJob().log("half way");
        await currentJob().updateProgress(100);
        await assert.rejects(currentJob().log("x".repeat(5000)), InvalidArgumentError);
        await assert.rejects(currentJob().updateProgress(101), QueueError);
        return "done";
      });
      const started: JobStartedEvent[] = [];
      const progress: JobProgressEvent[] = [];
      queue.on("job.started", (e) => started.push(e));
      queue.on("job.progress", (e) => progress.push(e));
      const worker = queue.runWorker();
      try {
        const id = await queue.enqueue("work", []);
        assert.equal(await queue.result(id, { timeoutMs: 15_000 }), "done");
        assert.deepEqual(await queue.getJobLogs(id), { logs: ["starting", "half way"], count: 2 });
        assert.deepEqual(await queue.getJobLogs(id, { offset: 1, limit: 1 }), {
          logs: ["half way"],
          count: 2,
        });
        assert.equal((await queue.getJob(id))?.progress, 100);
        assert.deepEqual(started, [{ jobId: id, taskName: "work", queue: "default", attempt: 1 }]);
        assert.deepEqual(
          progress.map((p) => [p.jobId, p.progress]),
          [
            [id, 40],
            [id, 100],
          ],
        );
        assert.deepEqual(await queue.getJobLogs("not-an-id"), { logs: [], count: 0 });
      } finally {
        await worker.stop();
        await queue.close();
      }
    });

    it("currentJob()'s methods work taken apart from it; serialized it shows the job's fields alone", async () => {
      n++;
      let seen: { jobId: string; queue: string; attempt: number; aborted: boolean } | undefined;
      let serialized: unknown;
      const queue = queueOn().task("work", async () => {
        const { jobId, queue: name, attempt, signal, log, updateProgress, setProgress } = currentJob();
        seen = { jobId, queue: name, attempt, aborted: signal.aborted };
        serialized = JSON.parse(JSON.stringify(currentJob()));
        await log("taken apart");
        await updateProgress(30);
        await setProgress(140); // clamped to 100
        await assert.rejects(log(7 as unknown as string), QueueError);
        return "done";
      });
      const progress: JobProgressEvent[] = [];
      queue.on("job.progress", (e) => progress.push(e));
      const worker = queue.runWorker({ queues: ["apart"] });
      try {
        const id = await queue.enqueue("work", [], { queue: "apart" });
        assert.equal(await queue.result(id, { timeoutMs: 15_000 }), "done");
        assert.deepEqual(seen, { jobId: id, queue: "apart", attempt: 1, aborted: false });
        // Its own fields alone: nothing of the worker's broker or queue state.
        assert.deepEqual(serialized, { jobId: id, taskName: "work", queue: "apart", attempt: 1 });
        assert.deepEqual(await queue.getJobLogs(id), { logs: ["taken apart"], count: 1 });
        assert.equal((await queue.getJob(id))?.progress, 100);
        assert.deepEqual(
          progress.map((p) => [p.jobId, p.progress, p.taskName, p.queue]),
          [
            [id, 30, "work", "apart"],
            [id, 100, "work", "apart"],
          ],
        );
      } finally {
        await worker.stop();
        await queue.close();
      }
    });

    it("a queue with recordEvents false stores no events; QueueEvents refuses bad options", async () => {
      n++;
      const quiet = new Queue({ broker: b.broker, namespace: `ns${n}`, recordEvents: false }).task(
        "t",
        () => 1,
      );
      const loud = queueOn().task("t", () => 1);
      try {
        const before = (await b.broker.readEvents(0, { limit: 0 })).lastId;
        await quiet.enqueue("t", []);
        await quiet.close();
        assert.equal((await b.broker.readEvents(0, { limit: 0 })).lastId, before);
        const id = await loud.enqueue("t", []);
        await loud.close(); // flushes what it gathered
        const page = await b.broker.readEvents(before);
        assert.deepEqual(
          page.events.map((e) => [e.type, JSON.parse(e.data).jobId]),
          [["job.enqueued", id]],
        );
      } finally {
        await quiet.close();
        await loud.close();
      }
      assert.throws(() => new QueueEvents({}), QueueError);
      assert.throws(() => new QueueEvents({ broker: b.broker, lastEventId: -1 }), QueueError);
      assert.throws(() => new QueueEvents({ broker: b.broker, pollMs: 0 }), QueueError);
      const listener = new QueueEvents({ broker: b.broker });
      assert.throws(() => listener.on("worker.started" as never, () => {}), QueueError);
      await listener.close();
    });

    it("a burst of enqueues is one row of the event log, which QueueEvents expands in order", async () => {
      n++;
      const ns = `ns${n}`;
      const queue = queueOn(b.broker, ns)
        .task("t", () => 1)
        .task("u", () => 2);
      const listener = new QueueEvents({ broker: b.broker, namespace: ns, pollMs: 20 });
      await listener.waitUntilReady();
      const seen: { jobId: string; taskName: string; id: number }[] = [];
      listener.on("job.enqueued", ({ jobId, taskName }, meta) => seen.push({ jobId, taskName, id: meta.id }));
      try {
        const before = (await b.broker.readEvents(0, { limit: 0 })).lastId;
        // 2,000 ids do not fit one row's 8 KiB of data: the run is cut where the data would overflow.
        const ts = await queue.enqueueMany(
          "t",
          Array.from({ length: 2000 }, () => ({ args: [] })),
        );
        const us = await queue.enqueueMany("u", [{ args: [] }, { args: [] }]);
        await queue.close(); // flushes what it gathered
        const rows = (await b.broker.readEvents(before)).events;
        assert.ok(rows.length >= 3 && rows.length <= 6, `${rows.length} rows for 2,002 enqueues`);
        for (const r of rows) assert.ok(Buffer.byteLength(r.data) <= 8192, "each row within the data cap");
        const stored = rows.flatMap((r) => {
          const d = JSON.parse(r.data) as { jobIds: string[]; taskName: string; namespace: string };
          assert.equal(d.namespace, ns);
          return d.jobIds.map((id) => `${d.taskName} ${id}`);
        });
        const expected = [...ts.map((id) => `t ${id}`), ...us.map((id) => `u ${id}`)];
        assert.deepEqual(stored, expected);
        await eventually(() => seen.length === 2002, 10_000, "every enqueue heard");
        assert.deepEqual(
          seen.map((e) => `${e.taskName} ${e.jobId}`),
          expected,
        );
        assert.equal(new Set(seen.map((e) => e.id)).size, rows.length, "one event id per row");
      } finally {
        await listener.close();
        await queue.close();
      }
    });

    it("a busy worker's starts and completions share rows, and QueueEvents gives each job its own duration", async () => {
      n++;
      const ns = `ns${n}`;
      const queue = queueOn(b.broker, ns).task("t", async () => {
        await new Promise((r) => setTimeout(r, 1));
      });
      const listener = new QueueEvents({ broker: b.broker, namespace: ns, pollMs: 20 });
      await listener.waitUntilReady();
      const local = new Map<string, number | undefined>();
      const heard = new Map<string, number | undefined>();
      const started: string[] = [];
      queue.on("job.completed", (e) => local.set(e.jobId, e.durationMs));
      listener.on("job.completed", (e) => heard.set(e.jobId, e.durationMs));
      listener.on("job.started", (e) => started.push(e.jobId));
      const before = (await b.broker.readEvents(0, { limit: 0 })).lastId;
      const worker = queue.runWorker({ concurrency: 4 });
      try {
        const ids = await queue.enqueueMany(
          "t",
          Array.from({ length: 40 }, () => ({ args: [] })),
        );
        await eventually(() => heard.size === 40 && started.length === 40, 10_000, "every completion heard");
        assert.deepEqual(new Set(started), new Set(ids));
        for (const id of ids) {
          assert.equal(typeof heard.get(id), "number", `job ${id} has a duration`);
          assert.equal(heard.get(id), local.get(id), `job ${id}: the duration its worker measured`);
        }
        const rows = (await b.broker.readEvents(before)).events.filter((r) => r.type !== "job.enqueued");
        assert.ok(rows.length < 40, `${rows.length} rows for 40 starts and 40 completions`);
      } finally {
        await worker.stop();
        await listener.close();
        await queue.close();
      }
    });

    it("QueueEvents delivers the jobs of a row whose per-job list is malformed, without those values", async () => {
      n++;
      const ns = `ns${n}`;
      const listener = new QueueEvents({ broker: b.broker, namespace: ns, pollMs: 20 });
      await listener.waitUntilReady();
      const heard: Record<string, unknown>[] = [];
      listener.on("job.completed", (e) => heard.push({ ...e }));
      try {
        const row = (ids: string[], each: unknown) =>
          JSON.stringify({ jobIds: ids, each, taskName: "t", namespace: ns });
        await b.broker.appendEvents([
          { type: "job.completed", data: row(["a", "b"], 5) },
          { type: "job.completed", data: row(["c"], { durationMs: "slow" }) },
          { type: "job.completed", data: row(["d", "e"], { durationMs: [1, 2] }) },
        ]);
        await eventually(() => heard.length === 5, 10_000, "every job heard");
        assert.deepEqual(heard, [
          { jobId: "a", taskName: "t" },
          { jobId: "b", taskName: "t" },
          { jobId: "c", taskName: "t" },
          { jobId: "d", taskName: "t", durationMs: 1 },
          { jobId: "e", taskName: "t", durationMs: 2 },
        ]);
      } finally {
        await listener.close();
      }
    });

    it("QueueEvents on another connection sees every job event, and resumes from its cursor", async () => {
      n++;
      const ns = `ns${n}`;
      const other = await b.second();
      const listener = new QueueEvents({ broker: other, namespace: ns, pollMs: 20 });
      await listener.waitUntilReady();
      const seen: [string, Record<string, unknown>][] = [];
      for (const name of [
        "job.enqueued",
        "job.started",
        "job.progress",
        "job.completed",
        "job.failed",
        "job.retrying",
        "job.dead",
        "job.cancelled",
      ] as const) {
        listener.on(name, (payload) => seen.push([name, payload as unknown as Record<string, unknown>]));
      }
      let flakes = 0;
      const queue = queueOn(b.broker, ns)
        .task("ok", async () => {
          await currentJob().updateProgress(50);
          return 1;
        })
        .task(
          "flaky",
          () => {
            if (flakes++ === 0) throw new Error("once");
            return 2;
          },
          fast,
        )
        .task(
          "doomed",
          () => {
            throw new Error("never");
          },
          { maxRetries: 0 },
        );
      const noise = queueOn(b.broker, `${ns}-other`).task("ok", () => 0);
      const worker = queue.runWorker({ concurrency: 2 });
      try {
        const ok = await queue.enqueue("ok", []);
        const flaky = await queue.enqueue("flaky", []);
        const doomed = await queue.enqueue("doomed", []);
        const cancelled = await queue.enqueue("ok", [], { delayMs: 60_000 });
        await noise.enqueue("ok", []);
        await queue.result(ok, { timeoutMs: 15_000 });
        await queue.result(flaky, { timeoutMs: 15_000 });
        await assert.rejects(queue.result(doomed, { timeoutMs: 15_000 }), JobFailedError);
        assert.equal(await queue.cancelJob(cancelled), true);
        const has = (name: string, id: string) => seen.some(([e, p]) => e === name && p.jobId === id);
        await eventually(
          () =>
            has("job.completed", ok) &&
            has("job.progress", ok) &&
            has("job.retrying", flaky) &&
            has("job.completed", flaky) &&
            has("job.dead", doomed) &&
            has("job.cancelled", cancelled),
          10_000,
          "every event",
        );
        for (const id of [ok, flaky, doomed, cancelled]) assert.ok(has("job.enqueued", id), `enqueued ${id}`);
        for (const id of [ok, flaky, doomed]) assert.ok(has("job.started", id), `started ${id}`);
        assert.ok(has("job.failed", flaky) && has("job.failed", doomed));
        assert.deepEqual(seen.find(([e]) => e === "job.progress")?.[1], {
          jobId: ok,
          progress: 50,
          taskName: "ok",
          queue: "default",
        });
        assert.equal(seen.filter(([e, p]) => e === "job.completed" && p.jobId === ok).length, 1);
        assert.ok(
          seen.every(([, p]) => [ok, flaky, doomed, cancelled].includes(String(p.jobId))),
          "another namespace's events are left out",
        );

        // A listener that went away resumes where it stopped.
        const cursor = listener.lastEventId;
        await listener.close();
        const later = await queue.enqueue("ok", []);
        await queue.result(later, { timeoutMs: 15_000 });
        const resumed = new QueueEvents({ broker: other, namespace: ns, lastEventId: cursor, pollMs: 20 });
        const again: string[] = [];
        resumed.on("job.enqueued", ({ jobId }) => again.push(`enqueued ${jobId}`));
        resumed.on("job.completed", ({ jobId }) => again.push(`completed ${jobId}`));
        try {
          await eventually(() => again.includes(`completed ${later}`), 10_000, "the resumed events");
          assert.deepEqual(again, [`enqueued ${later}`, `completed ${later}`]);
        } finally {
          await resumed.close();
        }
      } finally {
        await listener.close();
        await worker.stop();
        await queue.close();
        await noise.close();
      }
    });
  });
}
