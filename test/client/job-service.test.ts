import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { connect } from "../../src/client/index.js";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { openBroker } from "../../src/open.js";
import { startServer } from "../../src/server/index.js";

/** Lock tokens are random; everything else of a transcript is deterministic under a manual clock. */
function scrub(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, v) => {
      if (key === "lockToken") return "<token>";
      if (v && typeof v === "object" && v.type === "Buffer" && Array.isArray(v.data))
        return `<${Buffer.from(v.data).toString()}>`;
      return v;
    }),
  );
}

/** One pass over every JobService method and the extension fields of the broker calls. */
async function scenario(b: Broker, clock: ManualClock): Promise<unknown[]> {
  const out: unknown[] = [];
  const log = (label: string, value: unknown) => out.push([label, scrub(value)]);
  await b.createQueue("jobs", { lockDurationMs: 10_000, maxDeliveryCount: 5 });
  await b.createQueue("other");
  log(
    "send",
    await b.send("jobs", [
      { body: "a", subject: "email", maxDeliveryCount: 2, lockDurationMs: 5000, uniqueKey: "u1" },
      { body: "dup", uniqueKey: "u1" },
      { body: "b", subject: "email" },
      { body: "later", delayMs: 60_000 },
    ]),
  );
  const gated = await b.receiveAny(["other", "jobs"], {
    maxMessages: 5,
    gates: [{ subject: "email", maxLocked: 1 }],
  });
  log("gated", gated);
  const [a] = await b.getMessages([1]);
  log("record", a);
  log("browse-locked", await b.browse({ queues: ["jobs"], states: ["locked"] }));
  const locked = gated[0]!;
  await b.setProgress("jobs", locked.seqNumber, "wrong", 10).catch((e) => log("progress-bad-token", e.code));
  await b.setProgress("jobs", locked.seqNumber, "", 101).catch((e) => log("progress-out-of-range", e.code));
  await b.setProgress("jobs", locked.seqNumber, locked.lockToken!, 0);
  log("cancel-locked", await b.cancelMessage("jobs", locked.seqNumber));
  log(
    "renew-sees-cancel",
    await b.renewBatch("jobs", [{ seqNumber: locked.seqNumber, lockToken: locked.lockToken! }]),
  );
  log("cancel-scheduled", await b.cancelMessage("jobs", 3, { retainMs: 1000 }));
  log("stats", await b.stats("jobs"));
  log("settled-now", await b.awaitSettled([3, 2]));
  await b.complete("jobs", locked.seqNumber, locked.lockToken!, {
    retainMs: 5000,
    result: Buffer.from("done"),
  });
  const [second] = await b.receive("jobs");
  await b.abandon("jobs", second!.seqNumber, second!.lockToken!, { error: "boom", countDelivery: false });
  const [again] = await b.receive("jobs");
  await b.reject("jobs", again!.seqNumber, again!.lockToken!, { reason: "R", error: "bang" });
  log("errors", await b.messageErrors(again!.seqNumber));
  log("records", await b.getMessages([1, 2, 3, 404]));
  log("redrive-only", await b.redrive("jobs", { seqNumbers: [404] }));
  log("completed-batch", await b.completeBatch("jobs", [{ seqNumber: 1, lockToken: "x", retainMs: 1 }]));
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 30);
  log("settled-abort", await b.awaitSettled([1], { waitMs: 20_000, signal: abort.signal }));
  log("errors-none", await b.messageErrors(1));
  await b.pauseQueue("jobs");
  log(
    "paused",
    (await b.listQueues()).find((q) => q.name === "jobs"),
  );
  log("paused-receive", await b.receive("jobs"));
  await b.resumeQueue("jobs");
  log(
    "workers",
    await b.heartbeat({ workerId: "w1", queues: ["jobs"], status: "active", pid: 42, details: { k: "v" } }),
  );
  log("workers-again", await b.heartbeat({ workerId: "w1", queues: ["jobs"], status: "draining" }));
  log("list-workers", await b.listWorkers());
  log("remove-worker", [await b.removeWorker("w1"), await b.removeWorker("w1")]);
  log("lock", [
    await b.acquireLock("leader", "me", 1000),
    await b.acquireLock("leader", "you", 1000),
    await b.releaseLock("leader", "you"),
    await b.releaseLock("leader", "me"),
  ]);
  log("stats-after", await b.stats("jobs"));
  log("delete-settled", await b.deleteSettled("jobs", { states: ["cancelled"] }));
  log("browse-all", await b.browse({ limit: 10, order: "newest" }));
  clock.advance(1);
  return out;
}

/** The same scenario against the embedded engine and through a served broker must agree. */
async function runBoth(): Promise<{ embedded: unknown[]; remote: unknown[] }> {
  const eClock = new ManualClock();
  const embedded = await openBroker(":memory:", { clock: eClock, background: false, logger: silentLogger });
  const rClock = new ManualClock();
  const served = await openBroker(":memory:", { clock: rClock, background: false, logger: silentLogger });
  const server = await startServer({ broker: served, port: 0, logger: silentLogger });
  const remote = connect(server.url);
  try {
    return { embedded: await scenario(embedded, eClock), remote: await scenario(remote, rClock) };
  } finally {
    await embedded.close();
    await remote.close();
    await server.close();
  }
}

describe("JobService over HTTP", () => {
  it("agrees with the embedded engine, call for call", async () => {
    const { embedded, remote } = await runBoth();
    for (let i = 0; i < embedded.length; i++) assert.deepEqual(remote[i], embedded[i]);
    assert.equal(remote.length, embedded.length);
  });
});
