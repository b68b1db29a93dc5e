import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { InvalidArgumentError, LockLostError, NotFoundError } from "../../../src/contract/errors.js";
import {
  EVENT_LOG_RETENTION_MS,
  MAX_EVENT_LOG_EVENTS,
  MAX_FLOW_NODES,
  MAX_LOG_LINE_BYTES,
  MAX_MESSAGE_LOG_LINES,
} from "../../../src/contract/limits.js";
import { fails, receiveOne } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

// Flows (messages that wait for their children), message logs and the event log: the engine
// capabilities behind the job face's enqueueFlow, currentJob().log() and QueueEvents.
cases((factory) => {
  describe("§J7 flows", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 10_000 });
      await s.broker.createQueue("r", { lockDurationMs: 10_000 });
    });
    afterEach(() => s.close());

    it("J7.1 a parent waits (deferred) until its children complete, then becomes claimable", async () => {
      const [p, c1, c2] = await s.broker.sendFlow([
        { queue: "q", message: { body: "parent" } },
        { queue: "q", message: { body: "c1" }, parent: 0 },
        { queue: "r", message: { body: "c2" }, parent: 0 },
      ]);
      const [parent] = await s.broker.getMessages([p!]);
      assert.equal(parent?.state, "deferred");
      const first = await receiveOne(s.broker, "q");
      assert.equal(first.seqNumber, c1, "only the child is claimable in q");
      await s.broker.complete("q", c1!, first.lockToken, { retainMs: 60_000 });
      assert.equal(await s.broker.releaseDependents([c1!]), 0, "one child is still open");
      assert.deepEqual(await s.broker.receive("q"), []);
      const second = await receiveOne(s.broker, "r");
      await s.broker.complete("r", c2!, second.lockToken, { retainMs: 60_000 });
      assert.equal(await s.broker.releaseDependents([c2!]), 1);
      assert.equal((await receiveOne(s.broker, "q")).seqNumber, p);
      assert.deepEqual(await s.broker.dependencies(p!), [
        { seqNumber: c1!, failParentOnFailure: true, outcome: "completed" },
        { seqNumber: c2!, failParentOnFailure: true, outcome: "completed" },
      ]);
    });

    it("J7.2 a dead child dead-letters its parent and grandparent; failParentOnFailure false lets it run", async () => {
      const [g, p, c] = await s.broker.sendFlow([
        { queue: "q", message: { body: "grandparent" } },
        { queue: "q", message: { body: "parent" }, parent: 0 },
        { queue: "r", message: { body: "child" }, parent: 1 },
      ]);
      const child = await receiveOne(s.broker, "r");
      await s.broker.reject("r", c!, child.lockToken, { description: "boom" });
      assert.equal(await s.broker.releaseDependents([c!]), 2);
      const recs = await s.broker.getMessages([g!, p!]);
      assert.deepEqual(
        recs.map((r) => [r.state, r.deadLetterReason]),
        [
          ["dead_lettered", "ChildFailed"],
          ["dead_lettered", "ChildFailed"],
        ],
      );
      assert.match(recs[1]!.deadLetterDescription ?? "", new RegExp(`child ${c} failed: boom`));

      const [p2, c2] = await s.broker.sendFlow([
        { queue: "q", message: { body: "tolerant" } },
        { queue: "r", message: { body: "child" }, parent: 0, failParentOnFailure: false },
      ]);
      const child2 = await receiveOne(s.broker, "r");
      await s.broker.reject("r", c2!, child2.lockToken, { description: "boom" });
      await s.broker.releaseDependents([c2!]);
      assert.equal((await receiveOne(s.broker, "q")).seqNumber, p2);
      assert.deepEqual(await s.broker.dependencies(p2!), [
        { seqNumber: c2!, failParentOnFailure: false, outcome: "failed", error: "boom" },
      ]);
    });

    it("J7.3 without arguments it resolves every settled child (the sweep after a crash)", async () => {
      const [p, c] = await s.broker.sendFlow([
        { queue: "q", message: { body: "parent" } },
        { queue: "r", message: { body: "child" }, parent: 0 },
      ]);
      const child = await receiveOne(s.broker, "r");
      await s.broker.complete("r", c!, child.lockToken);
      // Deleted on completion (nothing kept): it counts as completed.
      assert.equal(await s.broker.releaseDependents(), 1);
      assert.equal((await receiveOne(s.broker, "q")).seqNumber, p);
    });

    it("J7.5 a deleted message takes its dependencies and log lines along", async () => {
      const [p, c] = await s.broker.sendFlow([
        { queue: "q", message: { body: "parent" } },
        { queue: "r", message: { body: "child" }, parent: 0 },
      ]);
      const child = await receiveOne(s.broker, "r");
      await s.broker.complete("r", c!, child.lockToken, { retainMs: 60_000 });
      await s.broker.releaseDependents([c!]);
      const parent = await receiveOne(s.broker, "q");
      await s.broker.appendMessageLog("q", p!, parent.lockToken, ["a line"]);
      assert.equal((await s.broker.dependencies(p!)).length, 1);
      assert.equal((await s.broker.messageLog(p!)).total, 1);
      await s.broker.complete("q", p!, parent.lockToken);
      assert.deepEqual(await s.broker.dependencies(p!), []);
      assert.equal((await s.broker.messageLog(p!)).total, 0);
    });

    it("J7.4 a flow is stored whole or not at all; bad flows are refused", async () => {
      await fails(
        s.broker.sendFlow([
          { queue: "q", message: { body: "parent" } },
          { queue: "r", message: { body: "child" }, parent: 0 },
          { queue: "missing", message: { body: "child" }, parent: 0 },
        ]),
        NotFoundError,
        "not_found",
      );
      assert.deepEqual(await s.broker.browse({ queues: ["q", "r"] }), []);
      await fails(s.broker.sendFlow([]), InvalidArgumentError, "invalid_argument");
      await fails(
        s.broker.sendFlow([{ queue: "q", message: { body: "x" }, parent: 0 }]),
        InvalidArgumentError,
        "invalid_argument",
      );
      await fails(
        s.broker.sendFlow(Array.from({ length: MAX_FLOW_NODES + 1 }, () => ({ queue: "q", message: {} }))),
        InvalidArgumentError,
        "invalid_argument",
      );
      await fails(
        s.broker.sendFlow([{ queue: "q", message: { body: "x", uniqueKey: "k" } }]),
        InvalidArgumentError,
        "invalid_argument",
      );
      assert.deepEqual(await s.broker.browse({ queues: ["q", "r"] }), []);
    });
  });

  describe("§J8 message logs", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 10_000 });
    });
    afterEach(() => s.close());

    it("J8.1 the lock holder appends lines; anyone reads them; the latest 1000 are kept", async () => {
      const [seq] = await s.broker.send("q", { body: "job" });
      const m = await receiveOne(s.broker, "q");
      assert.equal(await s.broker.appendMessageLog("q", seq!, m.lockToken, ["one", "two"]), 2);
      const page = await s.broker.messageLog(seq!);
      assert.deepEqual(
        page.entries.map((e) => [e.index, e.text]),
        [
          [1, "one"],
          [2, "two"],
        ],
      );
      assert.equal(page.entries[0]!.at, s.clock.now());
      for (let i = 0; i < 10; i++) {
        const lines = Array.from({ length: 100 }, (_, k) => `line ${2 + i * 100 + k + 1}`);
        await s.broker.appendMessageLog("q", seq!, m.lockToken, lines);
      }
      const capped = await s.broker.messageLog(seq!, { offset: 0, limit: 1 });
      assert.equal(capped.total, MAX_MESSAGE_LOG_LINES);
      assert.deepEqual(
        capped.entries.map((e) => [e.index, e.text]),
        [[3, "line 3"]],
      );
      const last = await s.broker.messageLog(seq!, { offset: MAX_MESSAGE_LOG_LINES - 1 });
      assert.deepEqual(
        last.entries.map((e) => e.text),
        ["line 1002"],
      );
    });

    it("J8.2 appends are fenced by the lock and capped; a refused append stores nothing", async () => {
      const [seq] = await s.broker.send("q", { body: "job" });
      await fails(s.broker.appendMessageLog("q", seq!, "not-the-token", ["x"]), LockLostError, "lock_lost");
      const m = await receiveOne(s.broker, "q");
      await fails(
        s.broker.appendMessageLog("q", seq!, m.lockToken, ["ok", "x".repeat(MAX_LOG_LINE_BYTES + 1)]),
        InvalidArgumentError,
        "invalid_argument",
      );
      await fails(
        s.broker.appendMessageLog(
          "q",
          seq!,
          m.lockToken,
          Array.from({ length: 101 }, () => "x"),
        ),
        InvalidArgumentError,
        "invalid_argument",
      );
      assert.equal((await s.broker.messageLog(seq!)).total, 0);
      await s.broker.complete("q", seq!, m.lockToken);
      await fails(s.broker.appendMessageLog("q", seq!, m.lockToken, ["late"]), LockLostError, "lock_lost");
    });

    it("J8.3 an append answers the lines kept, past the cap too; concurrent appends number theirs in turn", async () => {
      const [seq] = await s.broker.send("q", { body: "job" });
      const m = await receiveOne(s.broker, "q");
      const hundred = (tag: string) => Array.from({ length: 100 }, (_, k) => `${tag} ${k}`);
      const answers = await Promise.all(
        Array.from({ length: 11 }, (_, i) =>
          s.broker.appendMessageLog("q", seq!, m.lockToken, hundred(`a${i}`)),
        ),
      );
      assert.deepEqual(
        [...answers].sort((a, b) => a - b),
        [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1000],
      );
      assert.equal(await s.broker.appendMessageLog("q", seq!, m.lockToken, []), MAX_MESSAGE_LOG_LINES);
      const page = await s.broker.messageLog(seq!, { offset: 0, limit: 1000 });
      assert.equal(page.total, MAX_MESSAGE_LOG_LINES);
      assert.deepEqual(
        page.entries.map((e) => e.index),
        Array.from({ length: 1000 }, (_, k) => 101 + k),
      );
    });
  });

  describe("§J9 the event log", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
    });
    afterEach(() => s.close());

    it("J9.1 events are read after a cursor, in append order", async () => {
      const start = (await s.broker.readEvents(0, { limit: 0 })).lastId;
      await s.broker.appendEvents([
        { type: "job.enqueued", data: '{"jobId":"1"}' },
        { type: "job.completed", data: '{"jobId":"1"}' },
      ]);
      const page = await s.broker.readEvents(start);
      assert.deepEqual(
        page.events.map((e) => [e.type, e.data, e.at]),
        [
          ["job.enqueued", '{"jobId":"1"}', s.clock.now()],
          ["job.completed", '{"jobId":"1"}', s.clock.now()],
        ],
      );
      assert.equal(page.lastId, page.events[1]!.id);
      assert.ok(page.events[1]!.id > page.events[0]!.id);
      const rest = await s.broker.readEvents(page.events[0]!.id);
      assert.deepEqual(
        rest.events.map((e) => e.type),
        ["job.completed"],
      );
    });

    it("J9.2 the log keeps the latest events, none older than its retention", async () => {
      for (let i = 0; i < MAX_EVENT_LOG_EVENTS / 1000 + 1; i++) {
        await s.broker.appendEvents(
          Array.from({ length: 1000 }, (_, k) => ({ type: "e", data: String(i * 1000 + k) })),
        );
      }
      const first = await s.broker.readEvents(0, { limit: 1 });
      assert.equal(first.events[0]!.data, "1000", "the oldest 1000 events were dropped");
      assert.equal(first.lastId - first.events[0]!.id + 1, MAX_EVENT_LOG_EVENTS);

      s.clock.advance(EVENT_LOG_RETENTION_MS + 1);
      await s.broker.appendEvents([{ type: "e", data: "fresh" }]);
      const after = await s.broker.readEvents(0);
      assert.deepEqual(
        after.events.map((e) => e.data),
        ["fresh"],
      );
      assert.ok(after.events[0]!.id > first.lastId, "ids are never reused");
    });

    it("J9.3 bad events are refused and nothing of the call is stored", async () => {
      const before = (await s.broker.readEvents(0, { limit: 0 })).lastId;
      await fails(
        s.broker.appendEvents([
          { type: "ok", data: "1" },
          { type: "", data: "2" },
        ]),
        InvalidArgumentError,
        "invalid_argument",
      );
      await fails(
        s.broker.appendEvents([{ type: "big", data: "x".repeat(8193) }]),
        InvalidArgumentError,
        "invalid_argument",
      );
      await fails(
        s.broker.appendEvents(Array.from({ length: 1001 }, () => ({ type: "e", data: "" }))),
        InvalidArgumentError,
        "invalid_argument",
      );
      assert.equal((await s.broker.readEvents(0, { limit: 0 })).lastId, before);
    });
  });

  describe("§J11 failures the engine settles", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
    });
    afterEach(() => s.close());

    /** The `failed` metrics of `queue` summed over the kept minutes. */
    const failed = async (queue: string) =>
      (await s.broker.readMetrics("failed", { queues: [queue] })).reduce((n, p) => n + p.count, 0);

    it("J11.1 a lapsed lease at the delivery limit and a parent failed by its child count as failed", async () => {
      await s.broker.createQueue("lapse", { lockDurationMs: 1000, maxDeliveryCount: 1 });
      await s.broker.createQueue("kept", { lockDurationMs: 1000, maxDeliveryCount: 5 });
      await s.broker.send("lapse", [{ body: "a" }, { body: "b" }]);
      await s.broker.send("kept", { body: "c" });
      assert.equal((await s.broker.receive("lapse", { maxMessages: 2 })).length, 2);
      await receiveOne(s.broker, "kept");
      s.clock.advance(1001);
      await s.maintain();
      assert.equal((await s.broker.stats("lapse")).deadLettered, 2);
      assert.equal(await failed("lapse"), 2, "both dead-lettered by the reaper");
      assert.equal(await failed("kept"), 0, "a lease that lapsed below the limit is no failure");

      await s.broker.createQueue("parents", { lockDurationMs: 10_000 });
      await s.broker.createQueue("children", { lockDurationMs: 10_000 });
      const [, , c] = await s.broker.sendFlow([
        { queue: "parents", message: { body: "grandparent" } },
        { queue: "parents", message: { body: "parent" }, parent: 0 },
        { queue: "children", message: { body: "child" }, parent: 1 },
      ]);
      const child = await receiveOne(s.broker, "children");
      await s.broker.reject("children", c!, child.lockToken);
      assert.equal(await s.broker.releaseDependents([c!]), 2);
      assert.equal(await failed("parents"), 2, "the parent and the grandparent");
      // The rejection itself is its settler's to count (the job runner does), not the engine's.
      assert.equal(await failed("children"), 0);
      assert.equal(await s.broker.releaseDependents([c!]), 0);
      assert.equal(await failed("parents"), 2, "a second release counts nothing");
    });
  });
});
