import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { NotesValidationError, Queue, QueueError } from "../../src/jobs/index.js";
import { tempDir } from "../support/temp.js";
import { eventually, sleep } from "./helpers.js";
import { onEverySubject } from "./subject-queues.js";

onEverySubject("jobs: enqueue, results and inspection", (s) => {
  it("runs a task and returns its result; the job records its fields", async () => {
    const fresh = s.queue();
    const queue = fresh.task("add", (a: number, b: number) => a + b);
    queue.runWorker({ concurrency: 2 });
    const id = await queue.enqueue("add", [2, 3], { metadata: "m", notes: { b: 1, a: { z: 1, y: 2 } } });
    assert.equal(await queue.result(id), 5);
    assert.equal(await queue.getResult(id), 5);
    const job = await queue.getJob(id);
    assert.ok(job);
    assert.equal(job.status, "complete");
    assert.equal(job.taskName, "add");
    assert.equal(job.queue, "default");
    assert.equal(job.maxRetries, 3);
    assert.equal(job.timeoutMs, 300_000);
    assert.equal(job.retryCount, 0);
    assert.equal(job.metadata, "m");
    assert.equal(job.notes, '{"a":{"y":2,"z":1},"b":1}', "canonical JSON");
    assert.ok(job.startedAt && job.completedAt && job.completedAt >= job.startedAt);
    assert.ok(job.result);
  });

  it("runs higher priority first, and honours delayMs", async () => {
    const fresh = s.queue();
    const order: string[] = [];
    const queue = fresh.task("rec", (name: string) => {
      order.push(name);
    });
    await queue.enqueue("rec", ["low"], { priority: 1 });
    await queue.enqueue("rec", ["high"], { priority: 10 });
    await queue.enqueue("rec", ["mid"], { priority: 5 });
    const late = await queue.enqueue("rec", ["late"], { priority: 100, delayMs: 300 });
    assert.equal((await queue.getJob(late))?.status, "pending");
    queue.runWorker({ concurrency: 1 });
    await eventually(() => order.length === 4, 5000, "four jobs");
    assert.deepEqual(order, ["high", "mid", "low", "late"]);
  });

  it("uniqueKey returns the live job; the key frees once it finishes", async () => {
    const fresh = s.queue();
    const queue = fresh.task("u", () => "done");
    const a = await queue.enqueue("u", [], { uniqueKey: "k" });
    const b = await queue.enqueue("u", [], { uniqueKey: "k" });
    assert.equal(a, b);
    const [c] = await queue.enqueueMany("u", [{ options: { uniqueKey: "k" } }]);
    assert.equal(c, a);
    queue.runWorker();
    await queue.result(a);
    const d = await queue.enqueue("u", [], { uniqueKey: "k" });
    assert.notEqual(d, a);
  });

  it("validates notes: a plain object, at most 15 fields and 4 KiB", async () => {
    const fresh = s.queue();
    const queue = fresh.task("n", () => {});
    const many = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`f${i}`, i]));
    await assert.rejects(queue.enqueue("n", [], { notes: many }), NotesValidationError);
    await assert.rejects(queue.enqueue("n", [], { notes: { big: "x".repeat(5000) } }), NotesValidationError);
    await assert.rejects(
      queue.enqueue("n", [], { notes: [] as unknown as Record<string, unknown> }),
      NotesValidationError,
    );
    await assert.rejects(queue.enqueue("n", [], { maxRetries: -1 }), QueueError);
    assert.ok(await queue.enqueue("n", [], { notes: { ok: true } }));
  });

  it("enqueueMany keeps input order across queues; listJobs is newest first and filters", async () => {
    const fresh = s.queue();
    const queue = fresh.task("a", () => {}).task("b", () => {});
    const ids = await queue.enqueueMany("a", [{ args: [] }, { options: { queue: "other" } }, { args: [] }]);
    assert.equal(ids.length, 3);
    const bId = await queue.enqueue("b", []);
    const all = await queue.listJobs();
    assert.deepEqual(
      all.map((j) => j.id),
      [bId, ...[...ids].sort((x, y) => Number(y) - Number(x))],
    );
    assert.deepEqual(
      (await queue.listJobs({ task: "b" })).map((j) => j.id),
      [bId],
    );
    assert.deepEqual(
      (await queue.listJobs({ queue: "other" })).map((j) => j.id),
      [ids[1]],
    );
    assert.equal((await queue.listJobs({ status: "pending", limit: 2 })).length, 2);
    assert.equal((await queue.listJobs({ status: "pending", offset: 3 })).length, 1);
    assert.deepEqual(await queue.listJobs({ status: "running" }), []);
    assert.deepEqual(await queue.stats(), {
      pending: 4,
      running: 0,
      completed: 0,
      failed: 0,
      dead: 0,
      cancelled: 0,
    });
    assert.equal((await queue.statsByQueue("other")).pending, 1);
    assert.deepEqual(Object.keys(await queue.statsAllQueues()).sort(), ["default", "other"]);
  });

  it("pauseQueue stops claims until resumeQueue", async () => {
    const fresh = s.queue();
    let runs = 0;
    const queue = fresh.task("p", () => {
      runs++;
    });
    await queue.pauseQueue("default");
    assert.deepEqual(await queue.listPausedQueues(), ["default"]);
    queue.runWorker();
    const id = await queue.enqueue("p", []);
    await sleep(200);
    assert.equal(runs, 0);
    assert.equal((await queue.getJob(id))?.status, "pending");
    await queue.resumeQueue("default");
    await queue.result(id);
    assert.equal(runs, 1);
    assert.deepEqual(await queue.listPausedQueues(), []);
  });

  it("purgeCompleted deletes kept results; resultTtlMs 0 keeps nothing", async () => {
    const fresh = s.queue();
    const queue = fresh.task("r", () => 7).task("gone", () => 8, { resultTtlMs: 0 });
    queue.runWorker();
    const id = await queue.enqueue("r", []);
    assert.equal(await queue.result(id), 7);
    await assert.rejects(queue.purgeCompleted(Number.NaN), { code: "invalid_argument" });
    assert.equal(await queue.purgeCompleted(3_600_000.4), 0, "a fraction of a ms is rounded");
    assert.equal(await queue.purgeCompleted(0.4), 1);
    assert.equal(await queue.getJob(id), null);
    const gone = await queue.enqueue("gone", []);
    await eventually(async () => (await queue.getJob(gone)) === null, 5000, "the job to go");
    assert.equal(await queue.getResult(gone), undefined);
  });

  it("namespaces keep jobs apart", async () => {
    const other = s.queue({ namespace: `${s.namespace}-globex` }, await s.second()).task("x", () => "globex");
    const queue = s.queue({ namespace: `${s.namespace}-acme` }).task("x", () => "acme");
    const id = await queue.enqueue("x", []);
    other.runWorker();
    await sleep(150);
    assert.equal((await queue.getJob(id))?.status, "pending", "another namespace's worker does not claim it");
    assert.equal((await queue.getJob(id))?.namespace, `${s.namespace}-acme`);
    assert.deepEqual(await other.listJobs(), []);
    queue.runWorker();
    assert.equal(await queue.result(id), "acme");
  });
});

// About SQLite files specifically: a path's folders are created, and `:memory:` works.
describe("jobs: a queue on a SQLite location", () => {
  it("creates the parent folders of dbPath, and accepts :memory:", async () => {
    const tmp = tempDir();
    const path = join(tmp.dir, "a", "b", "jobs.db");
    const q = new Queue({ dbPath: path }).task("one", () => 1);
    await q.enqueue("one", []);
    assert.ok(existsSync(path));
    await q.close();
    tmp.cleanup();
    const mem = new Queue({ dbPath: ":memory:" }).task("one", () => 1);
    mem.runWorker();
    assert.equal(await mem.result(await mem.enqueue("one", [])), 1);
    await mem.close();
  });
});
