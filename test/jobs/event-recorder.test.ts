import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Broker } from "../../src/contract/broker.js";
import type { EventInput } from "../../src/contract/job-service.js";
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
});
