import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Broker } from "../../src/contract/broker.js";
import type { EventInput } from "../../src/contract/job-service.js";
import { MAX_EVENT_DATA_BYTES } from "../../src/contract/limits.js";
import { silentLogger } from "../../src/contract/logger.js";
import type { QueueCore } from "../../src/jobs/core.js";
import { EventRecorder } from "../../src/jobs/event-recorder.js";
import { QueueEventBus } from "../../src/jobs/events.js";

/** A recorder over an event bus whose appends land in `appended` (no broker behind it). */
function recorder(namespace?: string) {
  const events = new QueueEventBus();
  const appended: EventInput[] = [];
  const broker = {
    appendEvents: async (batch: EventInput[]) => {
      appended.push(...batch);
    },
  } as unknown as Broker;
  const core = {
    events,
    namespace,
    logger: silentLogger,
    broker: async () => broker,
  } as unknown as QueueCore;
  const rec = new EventRecorder(core);
  const rows = async () => {
    await rec.flush();
    return appended.map((e) => ({ type: e.type, data: JSON.parse(e.data) as Record<string, unknown> }));
  };
  return { events, rows };
}

describe("job event recorder: runs of events", () => {
  it("events that differ only by job id are one row; any other difference starts a new one", async () => {
    const { events, rows } = recorder();
    events.emit("job.enqueued", { jobId: "1", taskName: "t", queue: "q" });
    events.emit("job.enqueued", { jobId: "2", taskName: "t", queue: "q" });
    events.emit("job.enqueued", { jobId: "3", taskName: "u", queue: "q" });
    events.emit("job.enqueued", { jobId: "4", taskName: "u", queue: "q", retryCount: 1 });
    events.emit("job.enqueued", { jobId: "5", taskName: "u", queue: "q", retryCount: 1 });
    events.emit("job.completed", { jobId: "6", taskName: "u", queue: "q", retryCount: 1 });
    events.emit("job.enqueued", { jobId: "7", taskName: "u" });
    assert.deepEqual(await rows(), [
      { type: "job.enqueued", data: { jobIds: ["1", "2"], taskName: "t", queue: "q" } },
      { type: "job.enqueued", data: { jobId: "3", taskName: "u", queue: "q" } },
      { type: "job.enqueued", data: { jobIds: ["4", "5"], taskName: "u", queue: "q", retryCount: 1 } },
      { type: "job.completed", data: { jobId: "6", taskName: "u", queue: "q", retryCount: 1 } },
      { type: "job.enqueued", data: { jobId: "7", taskName: "u" } },
    ]);
  });

  it("an object a field holds is written as it was at each event, even when it is the same object", async () => {
    const { events, rows } = recorder();
    const detail = { step: 1 };
    const emit = (jobId: string) =>
      events.emit("job.failed", { jobId, taskName: "t", detail } as unknown as {
        jobId: string;
        taskName: string;
      });
    emit("1");
    detail.step = 2;
    emit("2");
    assert.deepEqual(await rows(), [
      { type: "job.failed", data: { jobId: "1", taskName: "t", detail: { step: 1 } } },
      { type: "job.failed", data: { jobId: "2", taskName: "t", detail: { step: 2 } } },
    ]);
  });

  it("in a namespace, every row carries it and a burst is still one row", async () => {
    const { events, rows } = recorder("ns");
    for (const jobId of ["1", "2", "3"]) events.emit("job.enqueued", { jobId, taskName: "t", queue: "q" });
    // Its own namespace field is replaced by the recorder's: stored the same, it joins the run.
    events.emit("job.enqueued", { jobId: "4", taskName: "t", queue: "q", namespace: "other" } as never);
    events.emit("job.enqueued", { jobId: "5", taskName: "u", queue: "q" });
    assert.deepEqual(await rows(), [
      {
        type: "job.enqueued",
        data: { jobIds: ["1", "2", "3", "4"], taskName: "t", queue: "q", namespace: "ns" },
      },
      { type: "job.enqueued", data: { jobId: "5", taskName: "u", queue: "q", namespace: "ns" } },
    ]);
  });

  it("a long error is cut in the row, and the events sharing the cut error still form one run", async () => {
    const { events, rows } = recorder();
    const error = "x".repeat(5000);
    events.emit("job.failed", { jobId: "1", taskName: "t", error });
    events.emit("job.failed", { jobId: "2", taskName: "t", error });
    const got = await rows();
    assert.equal(got.length, 1);
    assert.deepEqual(got[0]!.data.jobIds, ["1", "2"]);
    assert.equal((got[0]!.data.error as string).length, 2001);
  });

  it("a busy worker's starts and completions are a row each per flush, each job's events in order", async () => {
    const { events, rows } = recorder();
    const started = (jobId: string) =>
      events.emit("job.started", { jobId, taskName: "t", queue: "q", attempt: 1 });
    const completed = (jobId: string, durationMs: number) =>
      events.emit("job.completed", { jobId, taskName: "t", queue: "q", retryCount: 0, durationMs });
    started("1");
    started("2");
    completed("1", 0.5);
    started("3");
    completed("2", 1.25);
    completed("3", 2);
    assert.deepEqual(await rows(), [
      { type: "job.started", data: { jobIds: ["1", "2", "3"], taskName: "t", queue: "q", attempt: 1 } },
      {
        type: "job.completed",
        data: {
          jobIds: ["1", "2", "3"],
          each: { durationMs: [0.5, 1.25, 2] },
          taskName: "t",
          queue: "q",
          retryCount: 0,
        },
      },
    ]);
  });

  it("an event of a job whose later event is in a later row starts a row of its own", async () => {
    const { events, rows } = recorder();
    events.emit("job.started", { jobId: "1", taskName: "t", queue: "q", attempt: 1 });
    events.emit("job.failed", { jobId: "1", taskName: "t", queue: "q", error: "e" });
    // Its second attempt's start must come after the failure: not in the first row.
    events.emit("job.started", { jobId: "1", taskName: "t", queue: "q", attempt: 1 });
    events.emit("job.started", { jobId: "2", taskName: "t", queue: "q", attempt: 1 });
    assert.deepEqual(await rows(), [
      { type: "job.started", data: { jobId: "1", taskName: "t", queue: "q", attempt: 1 } },
      { type: "job.failed", data: { jobId: "1", taskName: "t", queue: "q", error: "e" } },
      { type: "job.started", data: { jobIds: ["1", "2"], taskName: "t", queue: "q", attempt: 1 } },
    ]);
  });

  it("a lone event keeps its per-job fields in its own shape; a field that is not a number is shared", async () => {
    const { events, rows } = recorder();
    events.emit("job.completed", { jobId: "1", taskName: "t", durationMs: 3 });
    events.emit("job.failed", { jobId: "2", taskName: "t", durationMs: "slow" } as never);
    events.emit("job.failed", { jobId: "3", taskName: "t", durationMs: "slow" } as never);
    assert.deepEqual(await rows(), [
      { type: "job.completed", data: { jobId: "1", durationMs: 3, taskName: "t" } },
      { type: "job.failed", data: { jobIds: ["2", "3"], taskName: "t", durationMs: "slow" } },
    ]);
  });

  it("a run stops at the size of an event's data, per-job values counted", async () => {
    const { events, rows } = recorder();
    for (let i = 0; i < 2000; i++)
      events.emit("job.completed", { jobId: String(i), taskName: "t", durationMs: i + 0.123456789 });
    const got = await rows();
    assert.ok(got.length > 1, "more than one row");
    const ids = got.flatMap((r) => r.data.jobIds as string[]);
    assert.deepEqual(
      ids,
      Array.from({ length: 2000 }, (_, i) => String(i)),
    );
    for (const r of got) {
      assert.ok(JSON.stringify(r.data).length <= MAX_EVENT_DATA_BYTES, "within the limit");
      assert.equal(
        (r.data.each as { durationMs: number[] }).durationMs.length,
        (r.data.jobIds as string[]).length,
      );
    }
  });
});

describe("job event recorder: bursts", () => {
  /** The rows of the same events, emitted as bursts (`emitBurst`) and one by one (`emit`). */
  async function bothWays(namespace: string | undefined, feed: (emit: Feed) => void) {
    const a = recorder(namespace);
    const b = recorder(namespace);
    feed({
      burst: (jobIds, shared) => a.events.emitBurst("job.enqueued", jobIds, shared),
      one: (event) => a.events.emit(event.type, event.payload as never),
    });
    feed({
      burst: (jobIds, shared) => {
        for (const jobId of jobIds) b.events.emit("job.enqueued", { jobId, ...shared });
      },
      one: (event) => b.events.emit(event.type, event.payload as never),
    });
    return { bursts: await a.rows(), single: await b.rows() };
  }

  it("a burst is stored as its events emitted one by one would be", async () => {
    for (const namespace of [undefined, "ns"]) {
      const { bursts, single } = await bothWays(namespace, ({ burst, one }) => {
        const t = { taskName: "t", queue: "q" };
        burst(["1", "2"], t);
        one({ type: "job.enqueued", payload: { jobId: "3", taskName: "t", queue: "q" } });
        burst(["4"], t);
        burst(["5", "6"], { taskName: "u", queue: "q" });
        one({ type: "job.started", payload: { jobId: "5", taskName: "u", queue: "q", attempt: 1 } });
        // Only the latest row of a type takes more: 7 and 8 start a row of their own.
        burst(["7", "8"], t);
        burst(["9"], { taskName: "u", queue: "q" });
      });
      assert.deepEqual(bursts, single);
      assert.deepEqual(
        bursts.map((r) => r.data.jobIds ?? [r.data.jobId]),
        [["1", "2", "3", "4"], ["5", "6"], ["5"], ["7", "8"], ["9"]],
      );
    }
  });

  it("a burst too large for one row is cut into rows within the limit, ids in order", async () => {
    const ids = Array.from({ length: 5000 }, (_, i) => String(1_000_000 + i));
    const { bursts, single } = await bothWays(undefined, ({ burst }) => {
      burst(ids, { taskName: "t", queue: "q" });
    });
    assert.deepEqual(bursts, single);
    assert.ok(bursts.length > 1, "more than one row");
    for (const r of bursts)
      assert.ok(JSON.stringify(r.data).length <= MAX_EVENT_DATA_BYTES, "within the limit");
    assert.deepEqual(
      bursts.flatMap((r) => r.data.jobIds as string[]),
      ids,
    );
  });
});

interface Feed {
  burst(jobIds: string[], shared: { taskName: string; queue: string }): void;
  one(event: { type: "job.enqueued" | "job.started"; payload: Record<string, unknown> }): void;
}
