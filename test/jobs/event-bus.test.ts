import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { QueueEventBus } from "../../src/jobs/events.js";

const payload = { jobId: "1", taskName: "t", queue: "q" };

describe("QueueEventBus", () => {
  it("calls each listener once, in the order added, whatever a listener throws", () => {
    const bus = new QueueEventBus();
    const calls: string[] = [];
    const a = () => calls.push("a");
    bus.on("job.enqueued", a);
    bus.on("job.enqueued", a);
    bus.on("job.enqueued", () => {
      calls.push("b");
      throw new Error("an observer's failure is its own");
    });
    bus.on("job.enqueued", () => calls.push("c"));
    bus.emit("job.enqueued", payload);
    assert.deepEqual(calls, ["a", "b", "c"]);
  });

  it("an emit goes through the listeners as they were when it began", () => {
    const bus = new QueueEventBus();
    const calls: string[] = [];
    const late = () => calls.push("late");
    const once = () => {
      calls.push("once");
      bus.off("job.enqueued", once);
      bus.on("job.enqueued", late);
    };
    bus.on("job.enqueued", once);
    bus.on("job.enqueued", () => calls.push("second"));
    bus.emit("job.enqueued", payload);
    assert.deepEqual(calls, ["once", "second"]);
    bus.emit("job.enqueued", payload);
    assert.deepEqual(calls, ["once", "second", "second", "late"]);
  });

  it("has() says whether anyone listens, until the last listener leaves", () => {
    const bus = new QueueEventBus();
    const a = () => {};
    const b = () => {};
    assert.equal(bus.has("job.started"), false);
    bus.on("job.started", a);
    bus.on("job.started", b);
    bus.off("job.started", a);
    assert.equal(bus.has("job.started"), true);
    bus.off("job.started", a);
    bus.off("job.started", b);
    assert.equal(bus.has("job.started"), false);
  });

  it("emitBurst: each listener gets one payload per job in order, a burst listener the burst in one call", () => {
    const bus = new QueueEventBus();
    const each: unknown[] = [];
    const bursts: unknown[] = [];
    bus.on("job.enqueued", (p) => each.push(p));
    bus.onBurst("job.enqueued", () => {
      throw new Error("an observer's failure is its own");
    });
    bus.onBurst("job.enqueued", (jobIds, shared) => bursts.push([jobIds, shared]));
    const shared = { taskName: "t", queue: "q" };
    bus.emitBurst("job.enqueued", ["1", "2", "3"], shared);
    bus.emitBurst("job.enqueued", [], shared);
    assert.deepEqual(each, [
      { jobId: "1", taskName: "t", queue: "q" },
      { jobId: "2", taskName: "t", queue: "q" },
      { jobId: "3", taskName: "t", queue: "q" },
    ]);
    assert.deepEqual(bursts, [[["1", "2", "3"], shared]]);
  });

  it("a single emit reaches a burst listener as a burst of one; has() counts burst listeners", () => {
    const bus = new QueueEventBus();
    const bursts: unknown[] = [];
    assert.equal(bus.has("job.enqueued"), false);
    bus.onBurst("job.enqueued", (jobIds, shared) => bursts.push([jobIds, shared]));
    assert.equal(bus.has("job.enqueued"), true);
    bus.emit("job.enqueued", { jobId: "7", taskName: "t", queue: "q", retryCount: 1 });
    assert.deepEqual(bursts, [[["7"], { taskName: "t", queue: "q", retryCount: 1 }]]);
  });
});
