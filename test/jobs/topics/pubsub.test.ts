import assert from "node:assert/strict";
import { it } from "node:test";
import { type Queue, QueueError } from "../../../src/jobs/index.js";
import { eventually } from "../helpers.js";
import { onEverySubject } from "../subject-queues.js";

// Spec §7.1: the behaviour the original's pubsub tests encode, one test each.
onEverySubject("job topics: fan-out subscribers", (s) => {
  function fresh(): Queue {
    const t = { queue: s.queue() };
    return t.queue;
  }

  it("declares and lists subscriptions", async () => {
    const queue = fresh()
      .subscriber("orders", "sendEmail", () => {}, { subscriptionName: "email" })
      .subscriber("orders", "track", () => {}, { subscriptionName: "analytics" });
    await queue.declareSubscriptions();
    const subs = await queue.listSubscriptions("orders");
    assert.deepEqual(subs.map((s) => s.subscriptionName).sort(), ["analytics", "email"]);
    assert.ok(subs.every((s) => s.active && s.durable && s.mode === "fanout"));
    assert.deepEqual(await queue.listTopics(), ["orders"]);
  });

  it("subscription name defaults to the task name", async () => {
    const queue = fresh().subscriber("orders", "audit", () => {});
    await queue.declareSubscriptions();
    const [sub] = await queue.listSubscriptions();
    assert.equal(sub?.subscriptionName, "audit");
    assert.equal(sub?.taskName, "audit");
  });

  it("redeclaring updates instead of duplicating", async () => {
    const queue = fresh().subscriber("orders", "send", () => {}, { queue: "mail" });
    await queue.declareSubscriptions();
    await queue.declareSubscriptions();
    const subs = await queue.listSubscriptions();
    assert.equal(subs.length, 1);
    assert.equal(subs[0]!.queue, "mail");
  });

  it("re-registering the same (topic, name) replaces the pending entry", async () => {
    const queue = fresh()
      .subscriber("orders", "first", () => {}, { subscriptionName: "s" })
      .subscriber("orders", "second", () => {}, { subscriptionName: "s", queue: "other" });
    await queue.declareSubscriptions();
    const subs = await queue.listSubscriptions();
    assert.equal(subs.length, 1);
    assert.equal(subs[0]!.taskName, "second");
    assert.equal(subs[0]!.queue, "other");
  });

  it("subscriber rejects per-task codecs (and debounce)", () => {
    const queue = fresh();
    assert.throws(
      () => queue.subscriber("orders", "t", () => {}, { codecs: ["gzip"] } as never),
      (err: unknown) => err instanceof QueueError && /per-task codecs do not apply/.test(err.message),
    );
    assert.throws(() => queue.subscriber("orders", "t", () => {}, { debounce: 10 } as never), QueueError);
  });

  it("an ephemeral subscription without an owner is refused", async () => {
    const queue = fresh();
    const broker = await queue.broker();
    await assert.rejects(
      broker.subscribeTask("orders", "tail", { task: "tail", queue: "default", durable: false }),
      /requires its owner/,
    );
  });

  it("persists delivery settings for a producer-only publisher", async () => {
    const consumer = s.queue().subscriber("orders", "slow", () => {}, {
      maxRetries: 7,
      timeoutMs: 60_000,
    });
    await consumer.declareSubscriptions();
    const producer = s.queue({}, await s.second());
    const [job] = await producer.publish("orders", [1]);
    assert.equal(job?.maxRetries, 7);
    assert.equal(job?.timeoutMs, 60_000);
    assert.equal(job?.taskName, "slow");
  });

  it("unsubscribe removes and reports a missing subscription", async () => {
    const queue = fresh().subscriber("orders", "a", () => {});
    await queue.declareSubscriptions();
    assert.equal(await queue.unsubscribe("orders", "a"), true);
    assert.equal(await queue.unsubscribe("orders", "a"), false);
    assert.deepEqual(await queue.listSubscriptions(), []);
  });

  it("a later declare does not resurrect an unsubscribed subscription", async () => {
    const queue = fresh().subscriber("orders", "a", () => {});
    await queue.declareSubscriptions();
    await queue.unsubscribe("orders", "a");
    await queue.declareSubscriptions();
    assert.deepEqual(await queue.listSubscriptions(), []);
  });

  it("redeclaring keeps a paused subscription paused", async () => {
    const queue = fresh().subscriber("orders", "a", () => {});
    await queue.declareSubscriptions();
    assert.equal(await queue.pauseSubscription("orders", "a"), true);
    await queue.declareSubscriptions();
    assert.deepEqual(await queue.publish("orders", [1]), []);
    assert.equal((await queue.listSubscriptions())[0]?.active, false);
  });

  it("pause blocks deliveries, resume restores them (no replay)", async () => {
    const queue = fresh().subscriber("orders", "a", () => {});
    await queue.declareSubscriptions();
    await queue.pauseSubscription("orders", "a");
    assert.deepEqual(await queue.publish("orders", [1]), []);
    assert.equal(await queue.resumeSubscription("orders", "a"), true);
    assert.equal((await queue.publish("orders", [2])).length, 1);
    assert.equal(await queue.pauseSubscription("orders", "nope"), false);
  });

  it("publishing to a topic without subscribers is a no-op", async () => {
    assert.deepEqual(await fresh().publish("nobody", [1]), []);
  });

  it("fans out to every subscriber, each running as its own job", async () => {
    const seen: string[] = [];
    const queue = fresh()
      .subscriber("orders", "a", (n: number) => {
        seen.push(`a${n}`);
      })
      .subscriber("orders", "b", (n: number) => {
        seen.push(`b${n}`);
      });
    await queue.declareSubscriptions();
    const jobs = await queue.publish("orders", [42]);
    assert.equal(jobs.length, 2);
    queue.runWorker({ concurrency: 2 });
    await eventually(() => seen.length === 2, 5000, "both handlers");
    assert.deepEqual(seen.sort(), ["a42", "b42"]);
  });

  it("a failing subscriber dead-letters without affecting its sibling", async () => {
    const queue = fresh()
      .subscriber(
        "orders",
        "fails",
        () => {
          throw new Error("boom");
        },
        { maxRetries: 0 },
      )
      .subscriber("orders", "works", (n: number) => n * 2);
    await queue.declareSubscriptions();
    const jobs = await queue.publish("orders", [21]);
    queue.runWorker({ concurrency: 2 });
    const byTask = new Map(jobs.map((j) => [j.taskName, j.id]));
    assert.equal(await queue.result(byTask.get("works")!), 42);
    await eventually(async () => (await queue.getJob(byTask.get("fails")!))?.status === "dead", 5000, "dead");
    assert.equal((await queue.getJob(byTask.get("works")!))?.status, "complete");
    const dead = await queue.deadLetters();
    assert.deepEqual(
      dead.map((d) => d.taskName),
      ["fails"],
    );
    assert.match(dead[0]!.notes ?? "", /"subscription":"fails"/, "the dead job keeps its stamp");
  });

  it("idempotencyKey dedupes per subscriber (republish returns the same jobs)", async () => {
    const queue = fresh()
      .subscriber("orders", "a", () => {})
      .subscriber("orders", "b", () => {});
    await queue.declareSubscriptions();
    const first = await queue.publish("orders", [1], { idempotencyKey: "evt-42" });
    const second = await queue.publish("orders", [1], { idempotencyKey: "evt-42" });
    assert.equal(first.length, 2);
    assert.deepEqual(second.map((j) => j.id).sort(), first.map((j) => j.id).sort());
    assert.equal((await queue.listJobs()).length, 2, "no new rows");
  });

  it("deliveries carry topic and subscription in their notes", async () => {
    // Without a namespace: a namespaced queue stamps the broker's topic name (`ns::orders`).
    const queue = s
      .queue({ namespace: "" })
      .subscriber("orders", "a", () => {}, { subscriptionName: "email" });
    await queue.declareSubscriptions();
    const [job] = await queue.publish("orders", [5], { notes: { tenant: "acme" } });
    assert.deepEqual(JSON.parse(job?.notes ?? "{}"), {
      topic: "orders",
      subscription: "email",
      tenant: "acme",
    });
    const again = await queue.getJob(job!.id);
    assert.equal(again?.notes, job?.notes);
  });

  it("declareSubscriptions skips ephemeral subscribers", async () => {
    const queue = fresh()
      .subscriber("orders", "durable", () => {})
      .subscriber("orders", "tail", () => {}, { durable: false });
    await queue.declareSubscriptions();
    assert.deepEqual(
      (await queue.listSubscriptions()).map((s) => s.subscriptionName),
      ["durable"],
    );
  });

  it("an ephemeral subscription registers at worker start, owned by the worker; reaping spares fresh rows", async () => {
    const queue = fresh()
      .subscriber("orders", "durable", () => {})
      .subscriber("orders", "tail", () => {}, { durable: false });
    const worker = queue.runWorker({ heartbeatIntervalMs: 50 });
    await eventually(async () => (await queue.listSubscriptions()).length === 2, 5000, "registration");
    const tail = (await queue.listSubscriptions()).find((s) => s.subscriptionName === "tail")!;
    assert.equal(tail.durable, false);
    const subs = await (await queue.broker()).listSubscriptions();
    assert.equal(subs.find((s) => s.name === "tail")?.owner, worker.id);
    assert.equal(await queue.reapEphemeralSubscriptions(), 0);
    await worker.stop();
    assert.deepEqual(await queue.listWorkers(), []);
    assert.equal(await queue.reapEphemeralSubscriptions(), 0, "within the grace window");
    assert.equal((await queue.listSubscriptions()).length, 2);
  });

  it("topicStats: one row per subscription with its backlog", async () => {
    const queue = fresh()
      .subscriber("orders", "a", () => {})
      .subscriber("orders", "b", () => {});
    await queue.declareSubscriptions();
    const before = Date.now();
    await queue.publish("orders", [1]);
    await queue.publish("orders", [2]);
    const stats = await queue.topicStats();
    const elapsed = Date.now() - before;
    assert.equal(stats.length, 2);
    for (const s of stats) {
      assert.equal(s.pending, 2);
      assert.equal(s.running, 0);
      assert.equal(s.dead, 0);
      assert.equal(s.queue, "default");
      assert.equal(s.taskName, s.subscription);
      assert.ok(s.active && s.durable);
      // The oldest pending job was published after `before`: its age is at most the time since.
      assert.ok(
        s.oldestPendingAgeMs !== undefined && s.oldestPendingAgeMs >= 0,
        String(s.oldestPendingAgeMs),
      );
      assert.ok(
        s.oldestPendingAgeMs <= elapsed,
        `age ${s.oldestPendingAgeMs} ms, published ${elapsed} ms ago`,
      );
    }
  });

  it("topicStats: zeros for an idle subscription", async () => {
    const queue = fresh().subscriber("orders", "a", () => {});
    await queue.declareSubscriptions();
    const [s] = await queue.topicStats("orders");
    assert.deepEqual([s?.pending, s?.running, s?.dead], [0, 0, 0]);
    assert.equal(s?.oldestPendingAgeMs, undefined);
  });

  it("topicStats: a failed delivery counts as dead", async () => {
    const queue = fresh().subscriber(
      "orders",
      "fails",
      () => {
        throw new Error("no");
      },
      { maxRetries: 0 },
    );
    await queue.declareSubscriptions();
    await queue.publish("orders", [1]);
    queue.runWorker();
    await eventually(async () => (await queue.topicStats())[0]?.dead === 1, 5000, "dead");
    assert.equal((await queue.topicStats())[0]?.pending, 0);
  });

  it("topicStats filters by topic and ignores plain jobs", async () => {
    const queue = fresh()
      .subscriber("orders", "a", () => {})
      .subscriber("users", "b", () => {})
      .task("plain", () => {});
    await queue.declareSubscriptions();
    await queue.enqueue("plain", []);
    await queue.publish("orders", [1]);
    const stats = await queue.topicStats("orders");
    assert.deepEqual(
      stats.map((s) => [s.subscription, s.pending]),
      [["a", 1]],
    );
    assert.deepEqual(await queue.topicStats("unknown"), []);
  });
});
