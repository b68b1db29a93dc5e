import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { InvalidArgumentError } from "../../src/contract/errors.js";
import { MAX_KEEP_NEWEST, MAX_SEQ_NUMBERS_PER_CALL } from "../../src/contract/limits.js";
import {
  JobNotFoundError,
  JobStateError,
  type KeepJobs,
  Queue,
  QueueError,
  type RetryBackoff,
} from "../../src/jobs/index.js";
import { JOB_BROKER_SUBJECTS, type JobBroker } from "./broker-subjects.js";
import { eventually, sleep } from "./helpers.js";

// Scheduling and retention of the job face on every broker kind: fixed and custom backoff,
// interval periodic jobs, keepCompleted / keepDead, and promote / removeJob / retryJob.

/** A gate a handler waits on until the test opens it. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => {
    open = r;
  });
  return { wait, open };
}

describe("jobs: option checks (no broker needed)", () => {
  const queue = new Queue({ broker: {} as never });
  after(() => queue.close());

  it("refuses negative, NaN or unknown backoffs at registration", () => {
    const bad: unknown[] = [
      { type: "fixed", delayMs: -1 },
      { type: "fixed", delayMs: Number.NaN },
      { type: "fixed" },
      { type: "linear", delayMs: 10 },
      { baseMs: -5 },
      { maxMs: Number.POSITIVE_INFINITY },
      42,
    ];
    for (const retryBackoff of bad) {
      assert.throws(
        () => queue.task("t", () => 1, { retryBackoff: retryBackoff as RetryBackoff }),
        QueueError,
        JSON.stringify(retryBackoff),
      );
    }
    for (const ok of [{ type: "fixed", delayMs: 0 }, { type: "exponential", baseMs: 5 }, () => 5]) {
      queue.task("t", () => 1, { retryBackoff: ok as RetryBackoff });
    }
  });

  it("refuses a keepCompleted / keepDead that is empty, negative, fractional, too large or unknown", () => {
    const bad: unknown[] = [
      {},
      { count: -1 },
      { count: 1.5 },
      { count: MAX_KEEP_NEWEST + 1 },
      { ageMs: Number.NaN },
      { ageMs: -1 },
      { count: 1, keep: 2 },
      5,
    ];
    for (const keep of bad) {
      const what = JSON.stringify(keep);
      assert.throws(() => queue.task("t", () => 1, { keepCompleted: keep as KeepJobs }), QueueError, what);
      assert.throws(() => queue.task("t", () => 1, { keepDead: keep as KeepJobs }), QueueError, what);
      assert.throws(() => new Queue({ broker: {} as never, keepCompleted: keep as KeepJobs }), QueueError);
    }
    queue.task("t", () => 1, { keepCompleted: { count: MAX_KEEP_NEWEST }, keepDead: { ageMs: 0 } });
  });

  it("a periodic job needs exactly one of cron and everyMs, and everyMs at least 100", () => {
    queue.task("beat", () => 1);
    const q = queue as unknown as Queue;
    assert.throws(() => q.registerPeriodic("p", "beat", { cron: "* * * * *", everyMs: 1000 }), QueueError);
    assert.throws(() => q.registerPeriodic("p", "beat", {}), QueueError);
    for (const everyMs of [50, 0, -1000, 1000.5, Number.NaN])
      assert.throws(() => q.registerPeriodic("p", "beat", { everyMs }), QueueError, String(everyMs));
    const next = q.registerPeriodic("p", "beat", { everyMs: 60_000, args: [] });
    assert.ok(next !== undefined && next % 60_000 === 0 && next > Date.now() - 1);
    const [listed] = q.listPeriodic();
    assert.deepEqual([listed?.everyMs, listed?.cron], [60_000, undefined]);
    assert.equal(q.registerPeriodic("c", "beat", { cron: "0 * * * *" })! % 3_600_000, 0);
    assert.equal(q.listPeriodic().find((p) => p.name === "c")?.cron, "0 * * * *");
  });
});

for (const subject of JOB_BROKER_SUBJECTS) {
  describe(`jobs: backoff, interval periodic jobs, retention, promote/remove/retry (${subject.name})`, () => {
    let b: JobBroker;
    let n = 0;
    const queueOn = (broker = b.broker, options: Partial<ConstructorParameters<typeof Queue>[0]> = {}) =>
      new Queue({ broker, namespace: `ns${n}`, ...options });
    before(async () => {
      b = await subject.open();
    });
    after(() => b.close());

    it("a fixed backoff waits delayMs between attempts", async () => {
      n++;
      let calls = 0;
      const queue = queueOn().task(
        "flaky",
        () => {
          calls++;
          if (calls < 3) throw new Error(`fail ${calls}`);
          return "ok";
        },
        { retryBackoff: { type: "fixed", delayMs: 400 } },
      );
      const worker = queue.runWorker({ concurrency: 1 });
      try {
        const id = await queue.enqueue("flaky");
        const job = await eventually(async () => {
          const j = await queue.getJob(id);
          return j?.status === "failed" ? j : undefined;
        }, 10_000);
        const [err] = await queue.getJobErrors(id);
        const wait = job!.scheduledAt - err!.failedAt;
        assert.ok(wait >= 350 && wait <= 450, `waits the fixed delay (${wait} ms)`);
        assert.equal(await queue.result(id, { timeoutMs: 10_000 }), "ok");
        const errors = await queue.getJobErrors(id);
        assert.equal(errors.length, 2);
      } finally {
        await worker.stop();
        await queue.close();
      }
    });

    it("a backoff function gets the attempt and error; a throwing or bad one falls back to the default", async () => {
      n++;
      const seen: [number, string][] = [];
      const queue = queueOn()
        .task(
          "custom",
          (fails: number) => {
            const attempt = seen.length + 1;
            if (attempt <= fails) throw new Error(`boom ${attempt}`);
            return attempt;
          },
          {
            retryBackoff: (attempt, error) => {
              seen.push([attempt, (error as Error).message]);
              return attempt * 150;
            },
          },
        )
        .task(
          "throwing",
          () => {
            throw new Error("always");
          },
          {
            maxRetries: 1,
            retryBackoff: () => {
              throw new Error("bad backoff");
            },
          },
        )
        .task(
          "nan",
          () => {
            throw new Error("always");
          },
          { maxRetries: 1, retryBackoff: () => Number.NaN },
        );
      const worker = queue.runWorker({ concurrency: 4 });
      try {
        const id = await queue.enqueue("custom", [2]);
        assert.equal(await queue.result(id, { timeoutMs: 10_000 }), 3);
        assert.deepEqual(seen, [
          [1, "boom 1"],
          [2, "boom 2"],
        ]);
        const errors = await queue.getJobErrors(id);
        assert.equal(errors.length, 2);
        for (const task of ["throwing", "nan"] as const) {
          const bad = await queue.enqueue(task);
          const job = await eventually(async () => {
            const j = await queue.getJob(bad);
            return j?.status === "failed" ? j : undefined;
          }, 10_000);
          const [err] = await queue.getJobErrors(bad);
          const wait = job!.scheduledAt - err!.failedAt;
          assert.ok(wait >= 950 && wait <= 1050, `${task}: the default first backoff, 1 s (${wait} ms)`);
        }
      } finally {
        await worker.stop();
        await queue.close();
      }
    });

    it("an everyMs periodic job fires on each tick, once across two processes", async () => {
      n++;
      const fired: number[] = [];
      const make = (broker: typeof b.broker) =>
        queueOn(broker).task("beat", () => {
          fired.push(Date.now());
        });
      const q1 = make(b.broker);
      const q2 = make(await b.second());
      const every = 400;
      for (const q of [q1, q2])
        assert.equal(q.registerPeriodic("pulse", "beat", { everyMs: every })! % every, 0);
      const w1 = q1.runWorker();
      const w2 = q2.runWorker();
      try {
        await eventually(() => fired.length >= 4, 15_000, "four ticks");
        await Promise.all([w1.stop(), w2.stop()]);
        const jobs = await q1.listJobs({ task: "beat" });
        const ticks = jobs.map((j) => Math.floor(j.createdAt / every));
        assert.equal(new Set(ticks).size, jobs.length, "no tick was enqueued twice");
        assert.ok(jobs.length >= 4);
      } finally {
        await Promise.all([w1.stop(), w2.stop()]);
        await q1.close();
        await q2.close();
      }
    });

    it("keepCompleted and keepDead keep the newest count per task (task's own over the queue's)", async () => {
      n++;
      const queue = queueOn(b.broker, { keepCompleted: { count: 1 } })
        .task("kept2", (x: number) => x, { keepCompleted: { count: 2 } })
        .task("kept1", (x: number) => x)
        .task(
          "dies",
          (x: number) => {
            throw new Error(`dead ${x}`);
          },
          { maxRetries: 0, keepDead: { count: 1 } },
        )
        .task(
          "unmanaged",
          () => {
            throw new Error("dead");
          },
          { maxRetries: 0, keepCompleted: { count: 0 } },
        );
      const worker = queue.runWorker({ concurrency: 1 });
      try {
        const kept2: string[] = [];
        const kept1: string[] = [];
        for (let i = 0; i < 4; i++) {
          kept2.push(await queue.enqueue("kept2", [i]));
          await queue.result(kept2.at(-1)!, { timeoutMs: 10_000 });
          kept1.push(await queue.enqueue("kept1", [i]));
          await queue.result(kept1.at(-1)!, { timeoutMs: 10_000 });
        }
        const dead: string[] = [];
        for (let i = 0; i < 3; i++) dead.push(await queue.enqueue("dies", [i]));
        const unmanaged = await queue.enqueue("unmanaged");
        await eventually(async () => (await queue.stats()).dead === 4, 10_000, "four dead jobs");
        await worker.stop();
        // Retention by count is "latest settled first": the last dead job settled last.
        const lastDead = (await queue.deadLettersByTask("dies", 1))[0]!.id;
        assert.equal(await queue.applyRetention(), 3 + 2 + 2);
        const ids = async (task: string, status: "complete" | "dead") =>
          (await queue.listJobs({ task, status })).map((j) => j.id).sort();
        assert.deepEqual(await ids("kept2", "complete"), kept2.slice(2).sort());
        assert.deepEqual(await ids("kept1", "complete"), kept1.slice(3).sort());
        assert.deepEqual(await ids("dies", "dead"), [lastDead]);
        assert.deepEqual(await ids("unmanaged", "dead"), [unmanaged], "keepDead is not keepCompleted");
        assert.equal(await queue.applyRetention(), 0, "a second pass finds nothing more");
      } finally {
        await worker.stop();
        await queue.close();
      }
    });

    it("keepCompleted ageMs removes jobs finished longer ago; running workers apply it on their own", async () => {
      n++;
      const queue = queueOn()
        .task("aged", (x: number) => x, { keepCompleted: { ageMs: 1500 } })
        .task("counted", (x: number) => x, { keepCompleted: { count: 1 } });
      const worker = queue.runWorker({ concurrency: 1 });
      try {
        const aged = await queue.enqueue("aged", [1]);
        await queue.result(aged, { timeoutMs: 10_000 });
        await queue.applyRetention();
        assert.equal((await queue.getJob(aged))?.status, "complete", "younger than ageMs: kept");
        await sleep(1600);
        await queue.applyRetention();
        assert.equal(await queue.getJob(aged), null, "older than ageMs: removed");
        const counted: string[] = [];
        for (let i = 0; i < 3; i++) {
          counted.push(await queue.enqueue("counted", [i]));
          await queue.result(counted.at(-1)!, { timeoutMs: 10_000 });
        }
        // No applyRetention call: the worker's periodic sweep (every 5 s) trims them.
        await eventually(
          async () => (await queue.listJobs({ task: "counted", status: "complete" })).length === 1,
          15_000,
          "the sweep to keep one",
        );
        assert.equal((await queue.getJob(counted[2]!))?.status, "complete", "the newest is the one kept");
      } finally {
        await worker.stop();
        await queue.close();
      }
    });

    it("promote runs a delayed job now; a job not waiting for its time is refused", async () => {
      n++;
      const queue = queueOn().task("later", () => "ran");
      const worker = queue.runWorker();
      try {
        const id = await queue.enqueue("later", [], { delayMs: 3_600_000 });
        assert.equal((await queue.getJob(id))?.status, "pending");
        await queue.promote(id);
        assert.equal(await queue.result(id, { timeoutMs: 10_000 }), "ran");
        await assert.rejects(queue.promote(id), (e: unknown) => {
          assert.ok(e instanceof JobStateError);
          assert.equal(e.code, "job_state");
          assert.equal(e.status, "complete");
          return true;
        });
        await assert.rejects(queue.promote("987654321"), (e: unknown) => {
          assert.ok(e instanceof JobNotFoundError);
          assert.equal(e.code, "job_not_found");
          return true;
        });
        await assert.rejects(queue.promote("not-an-id"), JobNotFoundError);
      } finally {
        await worker.stop();
        await queue.close();
      }
    });

    it("removeJob deletes a pending, delayed, completed or dead job; a running one is refused", async () => {
      n++;
      const hold = gate();
      const started = gate();
      const queue = queueOn()
        .task("quick", () => 1)
        .task(
          "dies",
          () => {
            throw new Error("no");
          },
          { maxRetries: 0 },
        )
        .task("slow", async () => {
          started.open();
          await hold.wait;
          return "slow";
        });
      try {
        const pending = await queue.enqueue("quick");
        const delayed = await queue.enqueue("quick", [], { delayMs: 3_600_000 });
        await queue.removeJob(pending);
        await queue.removeJob(delayed);
        assert.equal(await queue.getJob(pending), null);
        assert.equal(await queue.getJob(delayed), null);
        const worker = queue.runWorker({ concurrency: 2 });
        try {
          const done = await queue.enqueue("quick");
          await queue.result(done, { timeoutMs: 10_000 });
          const dead = await queue.enqueue("dies");
          await eventually(async () => (await queue.getJob(dead))?.status === "dead", 10_000);
          await queue.removeJob(done);
          await queue.removeJob(dead);
          assert.equal(await queue.getJob(done), null);
          assert.equal(await queue.getJob(dead), null);
          const running = await queue.enqueue("slow");
          await started.wait;
          await assert.rejects(queue.removeJob(running), (e: unknown) => {
            assert.ok(e instanceof JobStateError);
            assert.equal(e.status, "running");
            return true;
          });
          hold.open();
          assert.equal(
            await queue.result(running, { timeoutMs: 10_000 }),
            "slow",
            "a refused remove changes nothing",
          );
          await assert.rejects(queue.removeJob(done), JobNotFoundError, "removed twice");
        } finally {
          hold.open();
          await worker.stop();
        }
      } finally {
        await queue.close();
      }
    });

    it("removeJob in a flow: a removed child counts as done, a removed parent cancels its pending children", async () => {
      n++;
      const queue = queueOn()
        .task("leaf", () => "leaf")
        .task("root", () => "root ran");
      try {
        const hour = { delayMs: 3_600_000 };
        const a = await queue.enqueueFlow({
          task: "root",
          children: [
            { task: "leaf", options: hour },
            { task: "leaf", options: hour },
          ],
        });
        const [c1, c2] = a.children.map((c) => c.id) as [string, string];
        await queue.removeJob(c1);
        assert.equal((await queue.getJob(a.id))?.status, "pending", "still waits for its other child");
        await queue.removeJob(a.id);
        assert.equal(await queue.getJob(a.id), null);
        assert.equal((await queue.getJob(c2))?.status, "cancelled", "its pending child is cancelled");
        const b = await queue.enqueueFlow({ task: "root", children: [{ task: "leaf", options: hour }] });
        await queue.removeJob(b.children[0]!.id);
        const worker = queue.runWorker();
        try {
          assert.equal(await queue.result(b.id, { timeoutMs: 10_000 }), "root ran", "the parent runs");
        } finally {
          await worker.stop();
        }
      } finally {
        await queue.close();
      }
    });

    it("retryJob reruns a dead job, and a failed one at once; other states are refused", async () => {
      n++;
      let deadCalls = 0;
      let failedCalls = 0;
      const queue = queueOn()
        .task(
          "once",
          () => {
            deadCalls++;
            if (deadCalls === 1) throw new Error("first time");
            return "second time";
          },
          { maxRetries: 0 },
        )
        .task(
          "slowRetry",
          () => {
            failedCalls++;
            if (failedCalls === 1) throw new Error("first time");
            return "retried";
          },
          { retryBackoff: { type: "fixed", delayMs: 3_600_000 } },
        );
      const worker = queue.runWorker();
      try {
        const dead = await queue.enqueue("once");
        await eventually(async () => (await queue.getJob(dead))?.status === "dead", 10_000);
        await queue.retryJob(dead);
        assert.equal(await queue.result(dead, { timeoutMs: 10_000 }), "second time");
        const failed = await queue.enqueue("slowRetry");
        await eventually(async () => (await queue.getJob(failed))?.status === "failed", 10_000);
        await queue.retryJob(failed);
        assert.equal(await queue.result(failed, { timeoutMs: 10_000 }), "retried");
        await assert.rejects(queue.retryJob(failed), (e: unknown) => {
          assert.ok(e instanceof JobStateError);
          assert.equal(e.status, "complete");
          return true;
        });
        const delayed = await queue.enqueue("once", [], { delayMs: 3_600_000 });
        await assert.rejects(queue.retryJob(delayed), JobStateError, "a pending job is not retried");
        await assert.rejects(queue.retryJob("987654321"), JobNotFoundError);
      } finally {
        await worker.stop();
        await queue.close();
      }
    });

    it("the broker verbs cap their lists and refuse a bad keepNewest", async () => {
      const broker = b.broker;
      await broker.createQueue(`caps${subject.name}`);
      const q = `caps${subject.name}`;
      const tooMany = Array.from({ length: MAX_SEQ_NUMBERS_PER_CALL + 1 }, (_, i) => i + 1);
      await assert.rejects(broker.promoteMessages(q, tooMany), InvalidArgumentError);
      await assert.rejects(broker.removeMessages(q, tooMany), InvalidArgumentError);
      await assert.rejects(broker.deleteSettled(q, { keepNewest: -1 }), InvalidArgumentError);
      await assert.rejects(
        broker.deleteSettled(q, { keepNewest: MAX_KEEP_NEWEST + 1 }),
        InvalidArgumentError,
      );
      const full = Array.from({ length: MAX_SEQ_NUMBERS_PER_CALL }, (_, i) => i + 1);
      assert.equal(await broker.promoteMessages(q, full), 0);
      const [seq] = await broker.schedule(q, { body: "x" }, Date.now() + 3_600_000);
      assert.equal(await broker.promoteMessages(q, [seq!]), 1);
      assert.equal(await broker.promoteMessages(q, [seq!]), 0, "an active message is left alone");
      const [msg] = await broker.receive(q, { maxMessages: 1 });
      assert.equal(msg?.seqNumber, seq);
      assert.equal(await broker.removeMessages(q, [seq!]), 0, "a locked message is left alone");
      await broker.abandon(q, seq!, msg!.lockToken!);
      assert.equal(await broker.removeMessages(q, [seq!]), 1);
      assert.deepEqual(await broker.getMessages([seq!]), []);
    });
  });
}
