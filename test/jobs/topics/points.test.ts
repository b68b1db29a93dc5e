import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { silentLogger } from "../../../src/contract/logger.js";
import { ManualClock } from "../../../src/core/clock.js";
import { Queue } from "../../../src/jobs/index.js";
import { REAPER_LOCK } from "../../../src/jobs/topics.js";
import { openBroker } from "../../../src/open.js";
import type { SqliteBroker } from "../../../src/store/sqlite/sqlite-broker.js";
import { eventually, tempQueue } from "../helpers.js";

/** A queue over an in-memory engine with a manual clock and no background loops. */
async function manual(): Promise<{
  queue: Queue;
  broker: SqliteBroker;
  clock: ManualClock;
  close(): Promise<void>;
}> {
  const clock = new ManualClock(1_800_000_000_000);
  const broker = await openBroker(":memory:", { clock, background: false, logger: silentLogger });
  const queue = new Queue({ broker });
  return {
    queue,
    broker,
    clock,
    close: async () => {
      await queue.close();
      await broker.close();
    },
  };
}

// Spec §8: the points to replicate exactly, one test each. These stay on embedded SQLite: most drive
// a manual clock with the background loops off (seconds, grace periods, reaping), which the job
// broker subjects (real clock, loops on) do not offer; the rules themselves run on every subject in
// the other job topic files and in test/conformance/cases/job-topics.case.ts.
describe("job topics: the points replicated exactly (spec §8)", () => {
  let cleanup: () => Promise<void> = async () => {};
  afterEach(() => cleanup());

  it("1. API visibility and retention are seconds; stored values and the publish's durations are ms", async () => {
    const m = await manual();
    cleanup = m.close;
    const { queue, broker, clock } = m;
    await queue.declareTopic("t", { retention: 1.5 });
    assert.equal((await broker.listDeclaredTopics())[0]?.retentionMs, 1500);
    await queue.subscribeLog("t", "p");
    await queue.publish("t", ["x"]);
    assert.equal((await queue.leaseTopic("t", "p", { visibility: 2 })).length, 1);
    clock.advance(1999);
    assert.deepEqual(await queue.leaseTopic("t", "p", { visibility: 2 }), []);
    clock.advance(1);
    assert.equal((await queue.leaseTopic("t", "p", { visibility: 2 })).length, 1, "2 s = 2000 ms");
    queue.subscriber("t", "task", () => {});
    await queue.declareSubscriptions();
    const now = clock.now();
    const [job] = await queue.publish("t", [1], {
      delayMs: 500,
      timeoutMs: 7000,
      expiresMs: 9000,
      resultTtlMs: 1234,
    });
    assert.equal(job?.scheduledAt, now + 500);
    assert.equal(job?.timeoutMs, 7000);
    const [rec] = await broker.getMessages([Number(job!.id)]);
    assert.equal(rec?.expiresAt, now + 500 + 9000, "the TTL runs from the delivery time");
    assert.equal(rec?.properties?.result_ttl_ms, "1234");
  });

  it("2. the salt formula, and a republish returning the same job ids", async () => {
    const t = tempQueue();
    cleanup = t.cleanup;
    const queue = t.queue
      .subscriber("orders", "a", () => {}, { subscriptionName: "email" })
      .subscriber("orders", "b", () => {}, { subscriptionName: "analytics" });
    await queue.declareSubscriptions();
    const first = await queue.publish("orders", [1], { idempotencyKey: "evt-42" });
    assert.deepEqual(first.map((j) => j.uniqueKey).sort(), [
      "evt-42::6:5:ordersemail",
      "evt-42::6:9:ordersanalytics",
    ]);
    const again = await queue.publish("orders", [1], { idempotencyKey: "evt-42" });
    assert.deepEqual(
      again.map((j) => j.id),
      first.map((j) => j.id),
    );
  });

  it("3. delivery settings resolve per field: publish, then subscription, then the defaults", async () => {
    const t = tempQueue();
    cleanup = t.cleanup;
    const queue = t.queue.subscriber("orders", "own", () => {}, {
      priority: 5,
      maxRetries: 0,
      timeoutMs: 60_000,
    });
    await queue.declareSubscriptions();
    // A subscription row without settings (written by another producer through the engine).
    await (await queue.broker()).subscribeTask("orders", "bare", { task: "bare", queue: "default" });
    const byTask = async (opts = {}) =>
      new Map((await queue.publish("orders", [1], opts)).map((j) => [j.taskName, j]));
    let jobs = await byTask();
    assert.deepEqual(
      [jobs.get("own")?.priority, jobs.get("own")?.maxRetries, jobs.get("own")?.timeoutMs],
      [5, 0, 60_000],
    );
    assert.deepEqual(
      [jobs.get("bare")?.priority, jobs.get("bare")?.maxRetries, jobs.get("bare")?.timeoutMs],
      [0, 3, 300_000],
    );
    jobs = await byTask({ priority: 9, maxRetries: 2 });
    assert.deepEqual(
      [jobs.get("own")?.priority, jobs.get("own")?.maxRetries, jobs.get("own")?.timeoutMs],
      [9, 2, 60_000],
      "field by field",
    );
    assert.equal(jobs.get("bare")?.priority, 9);
  });

  it("4. notes are stamped with topic and subscription, and stats are read off the delivery's columns", async () => {
    const t = tempQueue();
    cleanup = t.cleanup;
    const queue = t.queue
      .subscriber("orders", "a", () => {}, { subscriptionName: "email" })
      .task("plain", () => {});
    await queue.declareSubscriptions();
    await queue.enqueue("plain", [], { notes: { topic: "orders", subscription: "email" } });
    const [job] = await queue.publish("orders", [1], { notes: { tenant: "acme", topic: "ignored" } });
    assert.deepEqual(JSON.parse(job!.notes!), { subscription: "email", tenant: "acme", topic: "orders" });
    const [stat] = await queue.topicStats("orders");
    assert.equal(stat?.pending, 1, "a plain job whose notes look alike is not a delivery");
  });

  it("5. the late-join boundary; a declared topic stamps expiry only without a live log subscriber", async () => {
    const m = await manual();
    cleanup = m.close;
    const { queue, broker } = m;
    queue.subscriber("undeclared", "fan", () => {});
    await queue.declareSubscriptions();
    await queue.publish("undeclared", [1]);
    await queue.subscribeLog("undeclared", "late");
    assert.deepEqual(await queue.readTopic("undeclared", "late"), [], "nothing was stored before");
    await queue.declareTopic("declared", { retention: 60 });
    await queue.publish("declared", ["before"]);
    await queue.subscribeLog("declared", "reader");
    await queue.publish("declared", ["after"]);
    const [before, after] = await broker.readTopic("declared", "reader");
    assert.equal(before?.expiresAt, before!.enqueuedAt + 60_000);
    assert.equal(after?.expiresAt, undefined);
    await queue.pauseSubscription("declared", "reader");
    await queue.publish("declared", ["paused"]);
    await queue.resumeSubscription("declared", "reader");
    const paused = (await broker.readTopic("declared", "reader")).at(-1);
    assert.equal(paused?.expiresAt, paused!.enqueuedAt + 60_000, "a paused reader is not live");
  });

  it("6. reads and acks only for log subscriptions; exclusive reads; monotonic acks; ids in publish order", async () => {
    const t = tempQueue();
    cleanup = t.cleanup;
    const queue = t.queue.subscriber("orders", "fan", () => {});
    await queue.declareSubscriptions();
    await queue.subscribeLog("orders", "log");
    const ids: string[] = [];
    for (let n = 0; n < 12; n++) await queue.publish("orders", [n]);
    for (const m of await queue.readTopic("orders", "log")) ids.push(m.id);
    assert.deepEqual(await queue.readTopic("orders", "fan"), [], "a fan-out subscription reads nothing");
    assert.equal(await queue.ackTopic("orders", "fan", ids[0]!), false, "and acks nothing");
    assert.equal(await queue.ackTopic("orders", "log", ids[8]!), true);
    assert.equal(await queue.ackTopic("orders", "log", ids[8]!), false, "acking the same id again");
    assert.equal(await queue.ackTopic("orders", "log", ids[10]!), true, "ids order by publish, not as text");
    assert.deepEqual(
      (await queue.readTopic("orders", "log")).map((m) => m.args[0]),
      [11],
      "exclusive of the cursor",
    );
  });

  it("7. re-registering keeps pause state, creation time and cursor; unsubscribe drops the pending entry", async () => {
    const t = tempQueue();
    cleanup = t.cleanup;
    const queue = t.queue.subscriber("orders", "a", () => {}, { subscriptionName: "s" });
    await queue.declareSubscriptions();
    const broker = await queue.broker();
    const created = (await broker.listSubscriptions())[0]!.createdAt;
    await queue.pauseSubscription("orders", "s");
    await new Promise((r) => setTimeout(r, 5));
    queue.subscriber("orders", "b", () => {}, { subscriptionName: "s", queue: "other" });
    await queue.declareSubscriptions();
    const [row] = await broker.listSubscriptions();
    assert.equal(row?.paused, true);
    assert.equal(row?.createdAt, created);
    assert.equal(row?.task, "b");
    await queue.subscribeLog("orders", "log");
    await queue.publish("orders", [1]);
    const [m] = await queue.readTopic("orders", "log");
    await queue.ackTopic("orders", "log", m!.id);
    queue.logConsumer("orders", "log", () => {});
    await queue.declareSubscriptions();
    assert.equal((await queue.topicLogStats())[0]?.cursor, m!.id, "the cursor survives a re-register");
    await queue.unsubscribe("orders", "s");
    await queue.declareSubscriptions();
    assert.deepEqual(
      (await broker.listSubscriptions()).map((x) => x.name),
      ["log"],
    );
  });

  it("8. ephemeral reaping: 30 s liveness, 60 s grace, by the reaper-lease holder on heartbeat, once more at stop", async () => {
    const m = await manual();
    cleanup = m.close;
    const { queue, broker, clock } = m;
    await broker.heartbeat({ workerId: "ghost", queues: [], status: "active" });
    await broker.subscribeTask("orders", "ghost-tail", {
      task: "t",
      queue: "default",
      durable: false,
      owner: "ghost",
    });
    clock.advance(59_000);
    assert.equal(await broker.reapSubscriptions(), 0, "inside the grace window");
    clock.advance(2000);
    // The ghost's last heartbeat is 61 s old and the row 61 s old: a heartbeat of a live worker reaps it.
    queue.subscriber("orders", "mine", () => {}, { durable: false });
    const worker = queue.runWorker({ heartbeatIntervalMs: 60_000 });
    await eventually(
      async () => (await broker.listSubscriptions()).map((s) => s.name).join() === "mine",
      5000,
      "the ghost's row reaped, the worker's registered",
    );
    assert.equal(
      await broker.acquireLock(REAPER_LOCK, "someone-else", 1000),
      false,
      "the worker holds the lease",
    );
    // Another ghost row, fresh at the worker's heartbeat, stale by its stop: the final sweep removes it.
    await broker.subscribeTask("orders", "late-ghost", {
      task: "t",
      queue: "default",
      durable: false,
      owner: "gone",
    });
    clock.advance(61_000);
    await worker.stop();
    assert.deepEqual(
      (await broker.listSubscriptions()).map((s) => s.name),
      [],
      "both the stopped worker's and the ghost's rows are gone",
    );
  });

  it("9. managed consumers: eager registration, retry mode acks up to the failure and backs off", async () => {
    const t = tempQueue();
    cleanup = t.cleanup;
    const seen: number[] = [];
    const queue = t.queue.logConsumer(
      "orders",
      "c",
      (n: number) => {
        seen.push(n);
        if (n === 1) throw new Error("stuck");
      },
      { pollIntervalMs: 30 },
    );
    await eventually(
      async () =>
        (await queue.listSubscriptions()).some((s) => s.subscriptionName === "c" && s.mode === "log"),
      5000,
      "registered without a declare",
    );
    await queue.publish("orders", [0]);
    await queue.publish("orders", [1]);
    await queue.publish("orders", [2]);
    const first = (await queue.readTopic("orders", "c"))[0]!.id;
    queue.runWorker();
    await eventually(() => seen.filter((n) => n === 1).length >= 3, 10_000, "retries of the failing message");
    assert.equal(
      (await queue.topicLogStats())[0]?.cursor,
      first,
      "acked up to the message before the failure",
    );
    assert.ok(!seen.includes(2), "nothing past the failing message");
    assert.equal(seen.filter((n) => n === 0).length, 1);
  });

  it("10. compaction: expired rows first, then up to the slowest cursor, then per-message acks; 10 000 rows a pass", async () => {
    const m = await manual();
    cleanup = m.close;
    const { broker, clock } = m;
    await broker.declareTopic("expiring", { retentionMs: 1000 });
    for (let i = 0; i < 10_050; i += 1000) {
      await Promise.all(
        Array.from({ length: Math.min(1000, 10_050 - i) }, () => broker.publish("expiring", { body: "x" })),
      );
    }
    await broker.subscribeLog("cursor", "a");
    await broker.subscribeLog("cursor", "b");
    const c1 = (await broker.publish("cursor", { body: "1" })).logId!;
    const c2 = (await broker.publish("cursor", { body: "2" })).logId!;
    await broker.ackTopic("cursor", "a", c2);
    await broker.ackTopic("cursor", "b", c1);
    await broker.subscribeLog("leased", "p");
    await broker.publish("leased", { body: "1" });
    await broker.publish("leased", { body: "2" });
    const [l1] = await broker.leaseTopic("leased", "p", { limit: 2 });
    await broker.ackMessage("leased", "p", l1!.id);
    clock.advance(1001);
    const first = await broker.runMaintenanceOnce();
    assert.equal(first.retentionDropped, 10_000, "the budget, spent on expired rows first");
    assert.equal((await broker.topicLogStats("cursor")).find((s) => s.subscription === "a")?.lag, 0);
    const second = await broker.runMaintenanceOnce();
    assert.equal(
      second.retentionDropped,
      50 + 1 + 1,
      "the rest: 50 expired, 1 below the slowest cursor, 1 acked",
    );
    assert.deepEqual(
      (await broker.readTopic("cursor", "b")).map((x) => x.body.toString()),
      ["2"],
    );
    const stats = await broker.topicLogStats("leased");
    assert.equal(stats[0]?.lag, 1, "the un-acked leased message stays");
  });
});
