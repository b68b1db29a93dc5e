import assert from "node:assert/strict";
import { it } from "node:test";
import type { Queue } from "../../../src/jobs/index.js";
import { eventually, sleep } from "../helpers.js";
import { onEverySubject } from "../subject-queues.js";

const argsOf = (msgs: { args: unknown[] }[]) => msgs.map((m) => m.args);

// Spec §7.2 (log topics), §7.3 (per-message ack), §7.4 (declared topics).
onEverySubject("job topics: log topics", (s) => {
  function fresh(): Queue {
    const t = { queue: s.queue() };
    return t.queue;
  }

  it("stores one message per publish regardless of readers", async () => {
    const queue = fresh();
    await queue.subscribeLog("orders", "a");
    await queue.subscribeLog("orders", "b");
    assert.deepEqual(await queue.publish("orders", [1]), []);
    assert.deepEqual(await queue.publish("orders", [2]), []);
    assert.deepEqual(argsOf(await queue.readTopic("orders", "a")), [[1], [2]]);
    assert.deepEqual(argsOf(await queue.readTopic("orders", "b")), [[1], [2]]);
    const broker = await queue.broker();
    const stored = await broker.topicLogStats(`${s.namespace}::orders`);
    assert.deepEqual(
      stored.map((s) => s.lag),
      [2, 2],
      "two rows, read by both",
    );
  });

  it("the cursor advances on ack and is monotonic", async () => {
    const queue = fresh();
    await queue.subscribeLog("orders", "a");
    for (const n of [0, 1, 2]) await queue.publish("orders", [n]);
    const msgs = await queue.readTopic("orders", "a");
    assert.deepEqual(argsOf(msgs), [[0], [1], [2]]);
    assert.equal(await queue.ackTopic("orders", "a", msgs[1]!.id), true);
    assert.deepEqual(argsOf(await queue.readTopic("orders", "a")), [[2]]);
    assert.equal(await queue.ackTopic("orders", "a", msgs[0]!.id), false);
    assert.deepEqual(argsOf(await queue.readTopic("orders", "a")), [[2]]);
  });

  it("redelivers what was not acked (at-least-once)", async () => {
    const queue = fresh();
    await queue.subscribeLog("orders", "a");
    await queue.publish("orders", ["x"]);
    assert.deepEqual(argsOf(await queue.readTopic("orders", "a")), [["x"]]);
    assert.deepEqual(argsOf(await queue.readTopic("orders", "a")), [["x"]]);
  });

  it("bounds a read by its limit", async () => {
    const queue = fresh();
    await queue.subscribeLog("orders", "a");
    for (const n of [0, 1, 2, 3]) await queue.publish("orders", [n]);
    const first = await queue.readTopic("orders", "a", 2);
    assert.deepEqual(argsOf(first), [[0], [1]]);
    await queue.ackTopic("orders", "a", first[1]!.id);
    assert.deepEqual(argsOf(await queue.readTopic("orders", "a", 2)), [[2], [3]]);
  });

  it("reports the lag of each log subscription", async () => {
    const queue = fresh();
    await queue.subscribeLog("orders", "c");
    for (const n of [0, 1, 2]) await queue.publish("orders", [n]);
    let [s] = await queue.topicLogStats();
    assert.equal(s?.subscription, "c");
    assert.equal(s?.cursor, undefined);
    assert.equal(s?.lag, 3);
    assert.ok(s?.oldestUnackedAgeMs !== undefined);
    const msgs = await queue.readTopic("orders", "c");
    await queue.ackTopic("orders", "c", msgs.at(-1)!.id);
    [s] = await queue.topicLogStats();
    assert.equal(s?.lag, 0);
    assert.equal(s?.cursor, msgs.at(-1)!.id);
    assert.equal(s?.oldestUnackedAgeMs, undefined);
  });

  it("declareSubscriptions is the barrier of a managed consumer's registration", async () => {
    const queue = fresh().logConsumer("orders", "audit", () => {});
    await queue.declareSubscriptions();
    await queue.publish("orders", [5]);
    assert.deepEqual(argsOf(await queue.readTopic("orders", "audit")), [[5]]);
  });

  it("managed consumers in one worker: sync, async, retry and skip modes", { timeout: 60_000 }, async () => {
    const sync: number[] = [];
    const asyncSeen: number[] = [];
    const retry: number[] = [];
    const skip: number[] = [];
    let failedOnce = false;
    const queue = fresh()
      .logConsumer(
        "sync",
        "c",
        (n: number) => {
          sync.push(n);
        },
        { pollIntervalMs: 20 },
      )
      .logConsumer(
        "async",
        "c",
        async (n: number) => {
          await sleep(1);
          asyncSeen.push(n);
        },
        { pollIntervalMs: 20 },
      )
      .logConsumer(
        "retry",
        "c",
        (n: number) => {
          retry.push(n);
          if (n === 1 && !failedOnce) {
            failedOnce = true;
            throw new Error("transient");
          }
        },
        { pollIntervalMs: 20 },
      )
      .logConsumer(
        "skip",
        "c",
        (n: number) => {
          skip.push(n);
          if (n === 1) throw new Error("permanent");
        },
        { pollIntervalMs: 20, onError: "skip" },
      );
    await queue.declareSubscriptions();
    for (const n of [0, 1, 2]) {
      await queue.publish("sync", [n]);
      await queue.publish("retry", [n]);
      await queue.publish("skip", [n]);
    }
    await queue.publish("async", [42]);
    queue.runWorker({ concurrency: 1 });
    await eventually(
      () => sync.length === 3 && asyncSeen.length === 1 && retry.includes(2) && skip.length === 3,
      40_000,
      "every consumer to drain",
    );
    assert.deepEqual(sync, [0, 1, 2]);
    assert.deepEqual(asyncSeen, [42]);
    assert.deepEqual(retry, [0, 1, 1, 2], "msg 0 acked before the failure, msg 1 read again");
    assert.deepEqual(skip, [0, 1, 2]);
    await eventually(
      async () => (await queue.topicLogStats()).find((s) => s.topic === "skip")?.lag === 0,
      5000,
      "skip consumer caught up",
    );
  });

  it("a topic mixes fan-out and log subscribers: one publish, one stored row, one job", async () => {
    const got: number[] = [];
    const queue = fresh().subscriber("orders", "fan", (n: number) => {
      got.push(n);
    });
    await queue.declareSubscriptions();
    await queue.subscribeLog("orders", "log");
    const jobs = await queue.publish("orders", [7]);
    assert.equal(jobs.length, 1);
    queue.runWorker();
    await eventually(() => got.length === 1, 5000, "fan-out handler");
    assert.deepEqual(got, [7]);
    assert.deepEqual(argsOf(await queue.readTopic("orders", "log")), [[7]]);
  });

  it("a log message keeps the publish's metadata and notes (without the delivery stamp)", async () => {
    const queue = fresh();
    await queue.subscribeLog("orders", "a");
    await queue.publish("orders", [1], { metadata: "m", notes: { tenant: "acme" } });
    const [m] = await queue.readTopic("orders", "a");
    assert.equal(m?.metadata, "m");
    assert.deepEqual(m?.notes, { tenant: "acme" });
    assert.ok(typeof m?.id === "string" && m.createdAt > 0);
  });
});

onEverySubject("job topics: per-message ack", (s) => {
  async function withMessages(...args: unknown[]): Promise<Queue> {
    const t = { queue: s.queue() };
    await t.queue.subscribeLog("orders", "p");
    for (const a of args) await t.queue.publish("orders", [a]);
    return t.queue;
  }

  it("leases what is available and skips what is in flight", async () => {
    const queue = await withMessages(0, 1, 2);
    assert.deepEqual(argsOf(await queue.leaseTopic("orders", "p", { limit: 2 })), [[0], [1]]);
    assert.deepEqual(argsOf(await queue.leaseTopic("orders", "p")), [[2]]);
  });

  it("redelivers what was nacked, never what was acked", async () => {
    const queue = await withMessages("a", "b");
    const [a, b] = await queue.leaseTopic("orders", "p");
    assert.equal(await queue.ackMessage("orders", "p", a!.id), true);
    assert.equal(await queue.nackMessage("orders", "p", b!.id), true);
    assert.deepEqual(argsOf(await queue.leaseTopic("orders", "p")), [["b"]]);
  });

  it("redelivers after a short visibility (seconds)", async () => {
    const queue = await withMessages("x");
    assert.deepEqual(argsOf(await queue.leaseTopic("orders", "p", { visibility: 0.1 })), [["x"]]);
    assert.deepEqual(await queue.leaseTopic("orders", "p", { visibility: 0.1 }), []);
    await sleep(150);
    await eventually(
      async () => (await queue.leaseTopic("orders", "p", { visibility: 0.1 })).length === 1,
      3000,
      "redelivery",
    );
  });

  it("false when there is nothing to ack or nack", async () => {
    const queue = await withMessages("r");
    const [m] = await queue.readTopic("orders", "p");
    assert.equal(await queue.ackMessage("orders", "p", m!.id), false);
    assert.equal(await queue.nackMessage("orders", "p", m!.id), false);
  });

  it("a separate subscription's leases are unaffected", async () => {
    const queue = await withMessages(1);
    await queue.subscribeLog("orders", "other");
    await queue.publish("orders", [2]);
    assert.equal((await queue.leaseTopic("orders", "p")).length, 2);
    assert.deepEqual(
      argsOf(await queue.leaseTopic("orders", "other")),
      [[1], [2]],
      "p's leases hide nothing from other (a fresh reader starts at the stored backlog)",
    );
  });
});

onEverySubject("job topics: declared topics", (s) => {
  it("retains publishes to a declared topic with no subscriber", async () => {
    const t = { queue: s.queue() };
    const queue = t.queue;
    await queue.declareTopic("events");
    assert.deepEqual(await queue.publish("events", [1]), []);
    assert.deepEqual(await queue.publish("events", [2]), []);
    await queue.subscribeLog("events", "late");
    assert.deepEqual(argsOf(await queue.readTopic("events", "late")), [[1], [2]]);
  });

  it("lists declared topics and round-trips retention (seconds in, ms stored)", async () => {
    const t = { queue: s.queue() };
    const queue = t.queue;
    await queue.declareTopic("plain");
    await queue.declareTopic("bounded", { retention: 1.5 });
    const list = await queue.listDeclaredTopics();
    assert.deepEqual(
      list.map((d) => [d.name, d.mode, d.retentionMs]),
      [
        ["bounded", "log", 1500],
        ["plain", "log", undefined],
      ],
    );
    await assert.rejects(queue.declareTopic("neg", { retention: -1 }), /non-negative/);
  });
});
