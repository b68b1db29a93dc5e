import assert from "node:assert/strict";
import { it } from "node:test";
import {
  currentJob,
  JobFailedError,
  JobNotFoundError,
  JobTimeoutError,
  type OutcomeEvent,
  ResultTimeoutError,
} from "../../src/jobs/index.js";
import { eventually } from "./helpers.js";
import { onEverySubject } from "./subject-queues.js";

onEverySubject("jobs: retries, backoff, timeouts and dead letters", (s) => {
  it("retries with exponential backoff, then dead-letters with every attempt's error", async () => {
    const t = { queue: s.queue() };
    const attempts: number[] = [];
    const queue = t.queue.task(
      "flaky",
      () => {
        attempts.push(Date.now());
        throw new Error(`fail ${attempts.length}`);
      },
      { maxRetries: 3, retryBackoff: { baseMs: 40, maxMs: 100 } },
    );
    const events: string[] = [];
    for (const e of ["job.failed", "job.retrying", "job.dead"] as const) queue.on(e, () => events.push(e));
    queue.runWorker();
    const id = await queue.enqueue("flaky", []);
    await assert.rejects(queue.result(id), (err) => {
      assert.ok(err instanceof JobFailedError);
      assert.match(String(err.error), /fail 4/);
      return true;
    });
    assert.equal(attempts.length, 4, "first attempt plus maxRetries");
    const gaps = attempts.slice(1).map((at, i) => at - attempts[i]!);
    assert.ok(gaps[0]! >= 35, `first backoff ${gaps[0]}`);
    assert.ok(gaps[1]! >= 75, `second backoff doubles: ${gaps[1]}`);
    assert.ok(gaps[2]! >= 95 && gaps[2]! < 1000, `third is capped: ${gaps[2]}`);
    const job = await queue.getJob(id);
    assert.equal(job?.status, "dead");
    assert.equal(job?.retryCount, 3);
    const errors = await queue.getJobErrors(id);
    assert.deepEqual(
      errors.map((e) => e.attempt),
      [1, 2, 3, 4],
    );
    assert.deepEqual(
      errors.map((e) => JSON.parse(e.error).message),
      ["fail 1", "fail 2", "fail 3", "fail 4"],
    );
    assert.equal(JSON.parse(errors[0]!.error).errtype, "Error");
    assert.deepEqual(events.filter((e) => e === "job.failed").length, 4);
    assert.deepEqual(events.filter((e) => e === "job.retrying").length, 3);
    assert.deepEqual(events.at(-1), "job.dead");
    const stats = await queue.stats();
    assert.equal(stats.dead, 1);
  });

  it("a job waiting out its backoff is `failed`; pending again once due", async () => {
    const t = { queue: s.queue() };
    let n = 0;
    const queue = t.queue.task(
      "once",
      () => {
        if (++n === 1) throw new Error("first");
        return "ok";
      },
      { retryBackoff: { baseMs: 400 } },
    );
    queue.runWorker();
    const id = await queue.enqueue("once", []);
    await eventually(async () => (await queue.getJob(id))?.status === "failed", 3000, "failed status");
    assert.equal((await queue.stats()).failed, 1);
    assert.equal(
      (await queue.getJob(id))?.error && JSON.parse((await queue.getJob(id))!.error!).message,
      "first",
    );
    assert.equal(await queue.result(id), "ok");
    assert.equal((await queue.getJob(id))?.retryCount, 1);
  });

  it("retryOn returning false dead-letters at once", async () => {
    const t = { queue: s.queue() };
    class Fatal extends Error {}
    let runs = 0;
    const queue = t.queue.task(
      "fatal",
      () => {
        runs++;
        throw new Fatal("no");
      },
      { maxRetries: 5, retryOn: (err) => !(err instanceof Fatal) },
    );
    queue.runWorker();
    const id = await queue.enqueue("fatal", []);
    await assert.rejects(queue.result(id), JobFailedError);
    assert.equal(runs, 1);
    const [dead] = await queue.deadLetters();
    assert.equal(dead?.id, id);
    assert.equal(dead?.taskName, "fatal");
    assert.equal(dead?.retryCount, 0);
  });

  it("a timeout aborts the signal and counts as a failed attempt", async () => {
    const t = { queue: s.queue() };
    const reasons: unknown[] = [];
    let runs = 0;
    const queue = t.queue.task(
      "slow",
      () =>
        new Promise((resolve) => {
          runs++;
          const { signal } = currentJob();
          signal.addEventListener("abort", () => reasons.push(signal.reason));
          setTimeout(resolve, 2000).unref();
        }),
      { timeoutMs: 100, maxRetries: 1, retryBackoff: { baseMs: 10 } },
    );
    const failed: OutcomeEvent[] = [];
    queue.on("job.failed", (e) => failed.push(e));
    queue.runWorker();
    const id = await queue.enqueue("slow", []);
    await assert.rejects(queue.result(id), JobFailedError);
    assert.equal(runs, 2);
    assert.equal(reasons.length, 2);
    assert.ok(reasons[0] instanceof JobTimeoutError);
    assert.ok(failed.every((e) => e.timedOut));
    assert.equal(JSON.parse((await queue.getJobErrors(id))[0]!.error).errtype, "JobTimeoutError");
  });

  it("the timeout counts from the handler's start, its synchronous part included", async () => {
    const t = { queue: s.queue() };
    const queue = t.queue.task(
      "busy",
      async () => {
        // 150 ms of a 100 ms budget spent before the first await; what is left would end at 200 ms.
        const until = performance.now() + 150;
        while (performance.now() < until) {}
        await new Promise((resolve) => setTimeout(resolve, 50));
        return "done";
      },
      { timeoutMs: 100, maxRetries: 0 },
    );
    const failed: OutcomeEvent[] = [];
    queue.on("job.failed", (e) => failed.push(e));
    queue.runWorker();
    const id = await queue.enqueue("busy", []);
    await assert.rejects(queue.result(id), JobFailedError);
    assert.equal(failed.length, 1);
    assert.ok(failed[0]!.timedOut);
  });

  it("the per-job options override the task's", async () => {
    const t = { queue: s.queue() };
    let runs = 0;
    const queue = t.queue.task(
      "f",
      () => {
        runs++;
        throw new Error("x");
      },
      { maxRetries: 5, retryBackoff: { baseMs: 1 } },
    );
    queue.runWorker();
    const id = await queue.enqueue("f", [], { maxRetries: 0, timeoutMs: 1234 });
    await assert.rejects(queue.result(id), JobFailedError);
    assert.equal(runs, 1);
    const job = await queue.getJob(id);
    assert.equal(job?.maxRetries, 0);
    assert.equal(job?.timeoutMs, 1234);
  });

  it("result() times out, and knows unknown ids", async () => {
    const t = { queue: s.queue() };
    const queue = t.queue.task("never", () => {});
    const id = await queue.enqueue("never", []);
    await assert.rejects(queue.result(id, { timeoutMs: 100 }), ResultTimeoutError);
    await assert.rejects(queue.result("999999"), JobNotFoundError);
    await assert.rejects(queue.result("nope"), JobNotFoundError);
  });

  it("retryDead re-runs with a fresh budget and keeps notes and metadata; deleteDead and purgeDead", async () => {
    const t = { queue: s.queue() };
    let fail = true;
    const queue = t.queue.task(
      "d",
      () => {
        if (fail) throw new Error("down");
        return "up";
      },
      { maxRetries: 0 },
    );
    queue.runWorker();
    const id = await queue.enqueue("d", [], { notes: { tenant: "acme" }, metadata: "meta" });
    const other = await queue.enqueue("d", []);
    const third = await queue.enqueue("d", []);
    await assert.rejects(queue.result(id), JobFailedError);
    await assert.rejects(queue.result(other), JobFailedError);
    await assert.rejects(queue.result(third), JobFailedError);
    assert.equal((await queue.deadLetters()).length, 3);
    fail = false;
    assert.equal(await queue.retryDead(id), id);
    assert.equal(await queue.result(id), "up");
    const job = await queue.getJob(id);
    assert.equal(job?.notes, '{"tenant":"acme"}');
    assert.equal(job?.metadata, "meta");
    assert.equal(await queue.retryDead(id), null, "no longer dead");
    assert.equal(await queue.deleteDead(other), true);
    assert.equal(await queue.deleteDead(other), false);
    assert.equal(await queue.purgeDead(60_000), 0, "failed less than a minute ago");
    assert.equal(await queue.purgeDead(0), 1);
    assert.deepEqual(await queue.deadLetters(), []);
  });
});
