import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { InvalidArgumentError, NameConflictError, NotFoundError } from "../../../src/contract/errors.js";
import { fails, receiveOne } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

const notesOf = (props: Record<string, string> | undefined) => JSON.parse(props?.notes ?? "{}");
const bodies = (list: { body: Buffer }[]) => list.map((m) => m.body.toString());

// Job topics (TopicService): task and log subscriptions in the one subscription table, one publish
// path, the topic log, declared topics and per-message leases.
cases((factory) => {
  describe("§T1 task subscriptions and the one publish path", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
    });
    afterEach(() => s.close());

    it("T1.1 a publish makes one job per task subscription: subject = task, notes stamped, settings resolved", async () => {
      await s.broker.subscribeTask("orders", "email", {
        task: "sendEmail",
        queue: "mail",
        maxDeliveryCount: 8,
      });
      await s.broker.subscribeTask("orders", "analytics", {
        task: "track",
        queue: "default",
        priority: 5,
        lockDurationMs: 61_000,
      });
      const r = await s.broker.publish("orders", {
        body: "[42]",
        properties: { notes: '{"tenant":"acme"}', metadata: "m" },
      });
      assert.deepEqual(
        r.deliveries.map((d) => [d.subscription, d.kind, d.queue]),
        [
          ["email", "task", "mail"],
          ["analytics", "task", "default"],
        ],
        "in creation order",
      );
      assert.equal(r.logId, undefined, "no log subscription, not declared: nothing stored in the log");
      const recs = await s.broker.getMessages(r.deliveries.map((d) => d.seqNumber));
      const bySubject = new Map(recs.map((m) => [m.subject, m]));
      const track = bySubject.get("track")!;
      const email = bySubject.get("sendEmail")!;
      assert.equal(track.queue, "default");
      assert.equal(track.priority, 5);
      assert.equal(track.lockDurationMs, 61_000);
      assert.equal(email.queue, "mail");
      assert.equal(email.maxDeliveryCount, 8);
      assert.equal(email.body.toString(), "[42]");
      assert.deepEqual(notesOf(email.properties), { subscription: "email", tenant: "acme", topic: "orders" });
      assert.equal(email.properties?.notes, '{"subscription":"email","tenant":"acme","topic":"orders"}');
      assert.equal(email.properties?.metadata, "m");
      // The publish's own settings beat the subscription's (even priority 0).
      const [over] = (
        await s.broker.publish("orders", {
          body: "x",
          priority: 0,
          maxDeliveryCount: 2,
          lockDurationMs: 7000,
        })
      ).deliveries.filter((d) => d.subscription === "analytics");
      const [m] = await s.broker.getMessages([over!.seqNumber]);
      assert.equal(m?.priority, undefined, "priority 0");
      assert.equal(m?.maxDeliveryCount, 2);
      assert.equal(m?.lockDurationMs, 7000);
    });

    it("T1.2 a unique key is salted per subscription: a republish returns the same jobs, a newer subscription gets its own", async () => {
      await s.broker.subscribeTask("orders", "email", { task: "a", queue: "default" });
      await s.broker.subscribeTask("orders", "analytics", { task: "b", queue: "default" });
      const first = await s.broker.publish("orders", { body: "1", uniqueKey: "evt-42" });
      const second = await s.broker.publish("orders", { body: "1", uniqueKey: "evt-42" });
      assert.deepEqual(
        second.deliveries.map((d) => d.seqNumber),
        first.deliveries.map((d) => d.seqNumber),
      );
      assert.ok(second.deliveries.every((d) => d.duplicate));
      const recs = await s.broker.getMessages(first.deliveries.map((d) => d.seqNumber));
      assert.deepEqual(recs.map((r) => r.uniqueKey).sort(), [
        "evt-42::6:5:ordersemail",
        "evt-42::6:9:ordersanalytics",
      ]);
      await s.broker.subscribeTask("orders", "audit", { task: "c", queue: "default" });
      const third = await s.broker.publish("orders", { body: "1", uniqueKey: "evt-42" });
      assert.equal(third.deliveries.length, 3);
      assert.deepEqual(
        third.deliveries.filter((d) => !d.duplicate).map((d) => d.subscription),
        ["audit"],
      );
    });

    it("T1.3 a send to the topic takes the same path (queue copies and jobs in one transaction)", async () => {
      await s.broker.subscribe("orders", "audit-queue");
      await s.broker.subscribeTask("orders", "email", { task: "sendEmail", queue: "default" });
      const [seq] = await s.broker.send("orders", { body: "hi" });
      assert.ok(seq! > 0);
      const copy = await receiveOne(s.broker, "audit-queue");
      assert.equal(copy.body.toString(), "hi");
      const job = await receiveOne(s.broker, "default");
      assert.equal(job.subject, "sendEmail");
      assert.equal(job.body.toString(), "hi");
    });

    it("T1.4 paused subscriptions and filters are honoured; zero subscriptions publish nothing", async () => {
      await s.broker.subscribeTask("orders", "big", {
        task: "t",
        queue: "default",
        filter: "properties.size == 'big'",
      });
      await s.broker.subscribeTask("orders", "all", { task: "t", queue: "default" });
      const small = await s.broker.publish("orders", { body: "x", properties: { size: "small" } });
      assert.deepEqual(
        small.deliveries.map((d) => d.subscription),
        ["all"],
      );
      await s.broker.pauseSubscription("orders", "all");
      const big = await s.broker.publish("orders", { body: "x", properties: { size: "big" } });
      assert.deepEqual(
        big.deliveries.map((d) => d.subscription),
        ["big"],
      );
      await s.broker.pauseSubscription("orders", "big");
      assert.deepEqual((await s.broker.publish("orders", { body: "x" })).deliveries, []);
      await fails(s.broker.publish("nobody", { body: "x" }), NotFoundError, "not_found");
    });

    it("T1.5 re-subscribing updates in place, keeping pause state and creation time", async () => {
      await s.broker.subscribeTask("orders", "email", { task: "a", queue: "default" });
      const [before] = await s.broker.listSubscriptions();
      await s.broker.pauseSubscription("orders", "email");
      s.clock.advance(1000);
      await s.broker.subscribeTask("orders", "email", { task: "b", queue: "mail", maxDeliveryCount: 3 });
      const subs = await s.broker.listSubscriptions();
      assert.equal(subs.length, 1);
      assert.equal(subs[0]!.kind, "task");
      assert.equal(subs[0]!.task, "b");
      assert.equal(subs[0]!.queue, "mail");
      assert.equal(subs[0]!.maxDeliveryCount, 3);
      assert.equal(subs[0]!.paused, true);
      assert.equal(subs[0]!.durable, true);
      assert.equal(subs[0]!.createdAt, before!.createdAt);
    });

    it("T1.6 the flat namespace: a topic is never a queue, and a job topic is a live topic", async () => {
      await s.broker.createQueue("plain");
      await fails(
        s.broker.subscribeTask("plain", "x", { task: "t", queue: "default" }),
        NameConflictError,
        "name_conflict",
      );
      await fails(s.broker.subscribeLog("plain", "x"), NameConflictError, "name_conflict");
      await fails(s.broker.declareTopic("plain"), NameConflictError, "name_conflict");
      await s.broker.subscribeTask("orders", "email", { task: "t", queue: "default" });
      await fails(s.broker.createQueue("orders"), NameConflictError, "name_conflict");
      await s.broker.declareTopic("declared");
      await fails(s.broker.createQueue("declared"), NameConflictError, "name_conflict");
      await fails(
        s.broker.subscribeTask("orders2", "email", { task: "t", queue: "orders" }),
        NameConflictError,
        "name_conflict",
      );
      await s.broker.subscribe("orders", "backing");
      await fails(s.broker.subscribeLog("orders", "backing"), NameConflictError, "name_conflict");
      await fails(
        s.broker.subscribeTask("orders", "x", { task: "t", queue: "default", durable: false }),
        InvalidArgumentError,
        "invalid_argument",
      );
    });

    it("T1.7 topic stats count each task subscription's backlog; ephemeral rows of dead workers are reaped", async () => {
      await s.broker.subscribeTask("orders", "email", { task: "a", queue: "default" });
      await s.broker.subscribeTask("orders", "tail", {
        task: "b",
        queue: "default",
        durable: false,
        owner: "w1",
      });
      await s.broker.publish("orders", { body: "1" });
      await s.broker.publish("orders", { body: "2" });
      let stats = await s.broker.topicStats("orders");
      assert.deepEqual(
        stats.map((b) => [b.subscription, b.pending, b.running, b.dead, b.durable]),
        [
          ["email", 2, 0, 0, true],
          ["tail", 2, 0, 0, false],
        ],
      );
      assert.ok(stats.every((b) => b.oldestPendingAt !== undefined));
      const m = await receiveOne(s.broker, "default");
      await s.broker.reject("default", m.seqNumber, m.lockToken);
      stats = await s.broker.topicStats();
      assert.equal(
        stats.reduce((n, b) => n + b.dead, 0),
        1,
      );
      assert.deepEqual(await s.broker.topicStats("nope"), []);
      // A fresh ephemeral row survives (grace); a stale one whose owner is gone is removed.
      assert.equal(await s.broker.reapSubscriptions(), 0);
      s.clock.advance(61_000);
      await s.broker.heartbeat({ workerId: "w2", queues: [], status: "active" });
      assert.equal(await s.broker.reapSubscriptions(), 1);
      assert.deepEqual(
        (await s.broker.listSubscriptions()).map((x) => x.name),
        ["email"],
      );
    });
  });

  describe("§T2 log topics", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
    });
    afterEach(() => s.close());

    it("T2.1 one stored row per publish whatever the number of log subscriptions; exclusive, monotonic cursor", async () => {
      await s.broker.subscribeLog("orders", "a");
      await s.broker.subscribeLog("orders", "b");
      const ids: number[] = [];
      for (const n of [0, 1, 2]) {
        const r = await s.broker.publish("orders", { body: String(n) });
        assert.deepEqual(r.deliveries, []);
        ids.push(r.logId!);
      }
      assert.ok(ids[0]! < ids[1]! && ids[1]! < ids[2]!);
      assert.deepEqual(bodies(await s.broker.readTopic("orders", "a")), ["0", "1", "2"]);
      assert.deepEqual(
        bodies(await s.broker.readTopic("orders", "a")),
        ["0", "1", "2"],
        "a read moves nothing",
      );
      assert.equal(await s.broker.ackTopic("orders", "a", ids[1]!), true);
      assert.deepEqual(bodies(await s.broker.readTopic("orders", "a")), ["2"]);
      assert.equal(await s.broker.ackTopic("orders", "a", ids[0]!), false, "monotonic");
      assert.deepEqual(bodies(await s.broker.readTopic("orders", "a", { limit: 1 })), ["2"]);
      assert.deepEqual(bodies(await s.broker.readTopic("orders", "b", { limit: 2 })), ["0", "1"]);
      assert.deepEqual(await s.broker.readTopic("orders", "b", { limit: 0 }), []);
      assert.deepEqual(await s.broker.readTopic("orders", "nobody"), []);
      const lag = await s.broker.topicLogStats("orders");
      assert.deepEqual(
        lag.map((l) => [l.subscription, l.cursor, l.lag]),
        [
          ["a", ids[1], 1],
          ["b", undefined, 3],
        ],
      );
    });

    it("T2.1b maxBytes (our extension) cuts a read or a lease after the message that crosses it, one at least", async () => {
      await s.broker.subscribeLog("big", "all");
      await s.broker.subscribeLog("big", "eu", { filter: "subject == 'eu'" });
      await s.broker.subscribeLog("big", "lease");
      const body = Buffer.alloc(1000, 7);
      for (let i = 0; i < 6; i++) await s.broker.publish("big", { body, subject: "eu" });
      assert.equal((await s.broker.readTopic("big", "all", { maxBytes: 2500 })).length, 3);
      assert.equal((await s.broker.readTopic("big", "all", { maxBytes: 1 })).length, 1);
      assert.equal(
        (await s.broker.readTopic("big", "all", { maxBytes: 0 })).length,
        6,
        "not positive: the default",
      );
      assert.equal(
        (await s.broker.readTopic("big", "eu", { maxBytes: 1500 })).length,
        2,
        "a filtered read too",
      );
      const leased = await s.broker.leaseTopic("big", "lease", { maxBytes: 2000, visibilityMs: 60_000 });
      assert.equal(leased.length, 2);
      assert.equal(
        (await s.broker.leaseTopic("big", "lease", { visibilityMs: 60_000 })).length,
        4,
        "only those leased",
      );
    });

    it("T2.2 the late-join boundary: an undeclared topic stores nothing without an active log subscription", async () => {
      await s.broker.subscribeTask("orders", "email", { task: "t", queue: "default" });
      assert.equal((await s.broker.publish("orders", { body: "early" })).logId, undefined);
      await s.broker.subscribeLog("orders", "late");
      await s.broker.pauseSubscription("orders", "late");
      assert.equal((await s.broker.publish("orders", { body: "paused" })).logId, undefined);
      await s.broker.resumeSubscription("orders", "late");
      const mixed = await s.broker.publish("orders", { body: "mixed" });
      assert.equal(mixed.deliveries.length, 1, "fan-out and log on one topic");
      assert.ok(mixed.logId);
      assert.deepEqual(bodies(await s.broker.readTopic("orders", "late")), ["mixed"]);
    });

    it("T2.3 a declared topic keeps publishes for a later subscriber, expiring them after its retention", async () => {
      await s.broker.declareTopic("events", { retentionMs: 1500 });
      await s.broker.declareTopic("plain");
      const decl = await s.broker.listDeclaredTopics();
      assert.deepEqual(
        decl.map((d) => [d.name, d.retentionMs]),
        [
          ["events", 1500],
          ["plain", undefined],
        ],
      );
      const created = decl[0]!.createdAt;
      s.clock.advance(10);
      await s.broker.declareTopic("events", { retentionMs: 1500 });
      assert.equal((await s.broker.listDeclaredTopics())[0]!.createdAt, created, "idempotent");
      const [seq] = await s.broker.send("events", { body: "1" });
      assert.equal(seq, 0, "no queue copy");
      await s.broker.publish("events", { body: "2" });
      await s.broker.subscribeLog("events", "late");
      const got = await s.broker.readTopic("events", "late");
      assert.deepEqual(bodies(got), ["1", "2"]);
      assert.equal(got[0]!.expiresAt, got[0]!.enqueuedAt + 1500);
      // Published while a log subscription exists: no expiry (compaction governs).
      const live = await s.broker.publish("events", { body: "3" });
      assert.equal((await s.broker.readTopic("events", "late")).at(-1)!.expiresAt, undefined);
      s.clock.advance(2000);
      await s.maintain();
      assert.deepEqual(bodies(await s.broker.readTopic("events", "late")), ["3"]);
      assert.ok(live.logId);
      await fails(s.broker.declareTopic("x", { retentionMs: -1 }), InvalidArgumentError, "invalid_argument");
    });

    it("T2.4 compaction: up to the slowest cursor; a never-read subscription keeps everything", async () => {
      await s.broker.subscribeLog("t", "fast");
      await s.broker.subscribeLog("t", "slow");
      const ids: number[] = [];
      for (const n of [0, 1, 2]) ids.push((await s.broker.publish("t", { body: String(n) })).logId!);
      await s.broker.ackTopic("t", "fast", ids[2]!);
      await s.maintain();
      assert.equal((await s.broker.topicLogStats("t")).find((l) => l.subscription === "slow")!.lag, 3);
      await s.broker.ackTopic("t", "slow", ids[0]!);
      await s.maintain();
      await s.broker.subscribeLog("t", "fresh");
      assert.deepEqual(bodies(await s.broker.readTopic("t", "fresh")), ["1", "2"], "m0 compacted");
      await s.broker.unsubscribe("t", "fresh");
      await s.broker.unsubscribe("t", "fast");
      await s.broker.unsubscribe("t", "slow");
      await s.broker.subscribeLog("t", "again");
      assert.deepEqual(await s.broker.readTopic("t", "again"), [], "the log went with its last reader");
    });

    it("T2.5 per-message leases: skip in-flight, ack, nack, visibility; compaction of what every leaser acked", async () => {
      await s.broker.subscribeLog("t", "p");
      const ids: number[] = [];
      for (const n of ["a", "b", "c"]) ids.push((await s.broker.publish("t", { body: n })).logId!);
      assert.deepEqual(bodies(await s.broker.leaseTopic("t", "p", { limit: 2, visibilityMs: 1000 })), [
        "a",
        "b",
      ]);
      assert.deepEqual(bodies(await s.broker.leaseTopic("t", "p", { visibilityMs: 1000 })), ["c"]);
      assert.deepEqual(await s.broker.leaseTopic("t", "p"), []);
      assert.equal(await s.broker.ackMessage("t", "p", ids[0]!), true);
      assert.equal(await s.broker.ackMessage("t", "p", ids[0]!), false);
      assert.equal(await s.broker.nackMessage("t", "p", ids[1]!), true);
      const again = await s.broker.leaseTopic("t", "p");
      assert.deepEqual(bodies(again), ["b"]);
      assert.equal(again[0]!.attempts, 2);
      s.clock.advance(30_001);
      assert.deepEqual(bodies(await s.broker.leaseTopic("t", "p")), ["b", "c"], "lapsed leases come back");
      await s.broker.publish("t", { body: "d" });
      await s.maintain();
      const stats = await s.broker.topicLogStats("t");
      assert.equal(stats[0]!.lag, 3, "a acked by the only leaser: compacted");
      // Never leased: nothing to ack or nack.
      const [d] = await s.broker
        .readTopic("t", "p", { limit: 10 })
        .then((l) => l.filter((m) => m.body.toString() === "d"));
      assert.equal(await s.broker.ackMessage("t", "p", d!.id), false);
      assert.equal(await s.broker.nackMessage("t", "p", d!.id), false);
    });

    it("T2.6 a log subscription's filter: reads skip what it does not match", async () => {
      await s.broker.subscribeLog("t", "eu", { filter: "subject == 'eu'" });
      await s.broker.publish("t", { body: "1", subject: "eu" });
      await s.broker.publish("t", { body: "2", subject: "us" });
      await s.broker.publish("t", { body: "3", subject: "eu" });
      assert.deepEqual(bodies(await s.broker.readTopic("t", "eu")), ["1", "3"]);
      assert.deepEqual(bodies(await s.broker.leaseTopic("t", "eu")), ["1", "3"]);
      const subs = await s.broker.listSubscriptions();
      assert.deepEqual(
        subs.map((x) => [x.name, x.kind, x.filter]),
        [["eu", "log", "subject == 'eu'"]],
      );
    });
  });
});
