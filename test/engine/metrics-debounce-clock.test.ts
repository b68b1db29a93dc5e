import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { Broker } from "../../src/contract/broker.js";
import { METRIC_BUCKET_MS, METRICS_RETENTION_MS } from "../../src/contract/limits.js";
import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "../postgres/pg.js";

/** Job metrics' retention and the debounce deadline, on a clock the test moves (both engines). */
const subjects: {
  name: string;
  open(clock: ManualClock): Promise<{ broker: Broker; tick(): Promise<unknown>; close(): Promise<void> }>;
}[] = [
  {
    name: "sqlite",
    async open(clock) {
      const broker = new SqliteBroker(":memory:", { logger: silentLogger, clock, background: false });
      return { broker, tick: () => broker.runMaintenanceOnce(), close: () => broker.close() };
    },
  },
  {
    name: "postgres",
    async open(clock) {
      await requirePostgres();
      const schema = freshSchema("mqmetric");
      const broker = await PostgresBroker.open(PG_DSN, {
        schema,
        logger: silentLogger,
        clock,
        background: false,
      });
      return {
        broker,
        tick: () => broker.runMaintenanceOnce(),
        close: async () => {
          await broker.close();
          await dropSchema(schema);
        },
      };
    },
  },
];

for (const subject of subjects) {
  describe(`job metrics and debounce windows on a manual clock (${subject.name})`, () => {
    const closers: (() => Promise<void>)[] = [];
    after(async () => {
      for (const c of closers) await c();
    });

    it("buckets per minute, and drops buckets older than 7 days", async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 30));
      const { broker, close } = await subject.open(clock);
      closers.push(close);
      const t0 = clock.now();
      await broker.addMetrics([{ queue: "a", kind: "completed", count: 2 }]);
      clock.advance(20_000);
      await broker.addMetrics([
        { queue: "b", kind: "completed", count: 1 },
        { queue: "a", kind: "failed", count: 1 },
      ]);
      clock.advance(60_000);
      await broker.addMetrics([{ queue: "a", kind: "completed", count: 4 }]);
      const minute = Date.UTC(2026, 0, 1, 12, 0, 0);
      assert.deepEqual(await broker.readMetrics("completed"), [
        { minute, count: 3 },
        { minute: minute + METRIC_BUCKET_MS, count: 4 },
      ]);
      assert.deepEqual(await broker.readMetrics("completed", { queues: ["a"] }), [
        { minute, count: 2 },
        { minute: minute + METRIC_BUCKET_MS, count: 4 },
      ]);
      assert.deepEqual(await broker.readMetrics("failed", { queues: ["b"] }), []);
      assert.deepEqual(await broker.readMetrics("completed", { from: t0 + 60_000, to: t0 + 60_000 }), [
        { minute: minute + METRIC_BUCKET_MS, count: 4 },
      ]);
      // Seven days and a minute later, the next add drops the first minute's buckets.
      clock.set(minute + METRICS_RETENTION_MS + METRIC_BUCKET_MS);
      await broker.addMetrics([{ queue: "a", kind: "completed", count: 1 }]);
      // A 7-day range that starts at the first minute no longer finds it.
      assert.deepEqual(
        await broker.readMetrics("completed", { from: minute, to: minute + METRICS_RETENTION_MS }),
        [{ minute: minute + METRIC_BUCKET_MS, count: 4 }],
      );
      assert.deepEqual(await broker.readMetrics("completed"), [
        { minute: minute + METRIC_BUCKET_MS, count: 4 },
        { minute: minute + METRICS_RETENTION_MS + METRIC_BUCKET_MS, count: 1 },
      ]);
    });

    it("a debounced send moves its window's message to min(now + window, opened + maxWait)", async () => {
      const clock = new ManualClock(1_000_000_000);
      const { broker, tick, close } = await subject.open(clock);
      closers.push(close);
      await broker.createQueue("jobs");
      const d = { key: "k", windowMs: 1000, maxWaitMs: 2500 };
      const opened = clock.now();
      const first = await broker.sendDebounced("jobs", { body: "one" }, d);
      assert.equal(first.created, true);
      const at = async () => (await broker.getMessages([first.seqNumber]))[0]!;
      assert.equal((await at()).visibleAt, opened + 1000);
      clock.advance(800);
      assert.deepEqual(await broker.sendDebounced("jobs", { body: "two" }, d), {
        seqNumber: first.seqNumber,
        created: false,
      });
      assert.equal((await at()).visibleAt, opened + 1800);
      clock.advance(1500);
      await broker.sendDebounced("jobs", { body: "three" }, { ...d, replaceBody: true });
      const moved = await at();
      assert.equal(moved.visibleAt, opened + 2500, "capped by maxWait");
      assert.equal(moved.body.toString(), "three");
      assert.equal(moved.state, "scheduled");
      // Another key is another window; a queue of another name is not found.
      const other = await broker.sendDebounced("jobs", { body: "x" }, { ...d, key: "other" });
      assert.equal(other.created, true);
      assert.notEqual(other.seqNumber, first.seqNumber);
      await assert.rejects(broker.sendDebounced("missing", { body: "x" }, d), { code: "not_found" });
      // Once it is due and delivered, the window is closed: the next send opens a new one.
      clock.set(opened + 2500);
      await tick();
      const [claimed] = await broker.receive("jobs", { maxMessages: 1 });
      assert.equal(claimed?.seqNumber, first.seqNumber);
      const next = await broker.sendDebounced("jobs", { body: "four" }, d);
      assert.equal(next.created, true);
      assert.notEqual(next.seqNumber, first.seqNumber);
    });
  });
}
