import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { InvalidArgumentError, LockLostError } from "../../src/contract/errors.js";
import { MAX_DURATION_MS, MIN_LEASE_CAP_MS } from "../../src/contract/limits.js";
import type { LockRef, RenewBatchOptions } from "../../src/contract/types.js";
import { currentJob, Queue, QueueError } from "../../src/jobs/index.js";
import { DEFAULT_LEASE_MS, DEFAULT_TIMEOUT_MS } from "../../src/jobs/job-record.js";
import { JOB_BROKER_SUBJECTS, type JobBroker } from "./broker-subjects.js";
import { eventually, sleep } from "./helpers.js";

/** A message leased as a job with the default timeout is: its own lease is the timeout plus a second. */
const JOB_OWN_LEASE_MS = DEFAULT_TIMEOUT_MS + 1000;

for (const subject of JOB_BROKER_SUBJECTS) {
  describe(`jobs: leases independent of the timeout (${subject.name})`, () => {
    let b: JobBroker;
    let n = 0;
    before(async () => {
      b = await subject.open();
    });
    after(() => b.close());

    it("a claim and a renewal with lockDurationMs lease for at most that long; without it, the message's own lease", async () => {
      const q = `cap${++n}`;
      await b.broker.createQueue(q);
      await b.broker.send(q, [{ body: Buffer.from("x"), lockDurationMs: JOB_OWN_LEASE_MS }]);
      const before = Date.now();
      const [m] = await b.broker.receiveAny([q], { lockDurationMs: 2000 });
      assert.ok(m, "claimed");
      assert.equal(m.lockDurationMs, JOB_OWN_LEASE_MS, "the message keeps its own lease (the job's timeout)");
      assert.ok(m.lockedUntil! >= before + 2000 && m.lockedUntil! <= Date.now() + 2000, "capped at 2 s");
      const [capped] = await b.broker.renewBatch(q, [{ seqNumber: m.seqNumber, lockToken: m.lockToken! }], {
        lockDurationMs: 3000,
      });
      assert.equal(capped!.ok, true);
      assert.ok(capped!.lockedUntil! <= Date.now() + 3000 && capped!.lockedUntil! >= m.lockedUntil!);
      const [own] = await b.broker.renewBatch(q, [{ seqNumber: m.seqNumber, lockToken: m.lockToken! }]);
      assert.ok(own!.lockedUntil! >= Date.now() + JOB_OWN_LEASE_MS - 5000, "uncapped: the own lease");
      // A renewal never shortens a lease, capped or not.
      const [again] = await b.broker.renewBatch(q, [{ seqNumber: m.seqNumber, lockToken: m.lockToken! }], {
        lockDurationMs: 2000,
      });
      assert.equal(again!.lockedUntil, own!.lockedUntil);
    });

    it("refuses a lockDurationMs out of bounds with invalid_argument, claiming and renewing nothing", async () => {
      const q = `bad${++n}`;
      await b.broker.createQueue(q);
      const [seq] = await b.broker.send(q, [{ body: Buffer.from("x") }]);
      for (const bad of [0, MIN_LEASE_CAP_MS - 1, -5000, MAX_DURATION_MS + 1]) {
        await assert.rejects(
          b.broker.receiveAny([q], { lockDurationMs: bad }),
          (err: unknown) =>
            err instanceof InvalidArgumentError &&
            err.code === "invalid_argument" &&
            /lock_duration_ms must be from 1000/.test(err.message),
          `receiveAny refuses ${bad}`,
        );
      }
      // A fraction: refused too (over the wire, by the JSON decoding of an integer field).
      await assert.rejects(
        b.broker.receiveAny([q], { lockDurationMs: 1500.5 }),
        (err: unknown) => err instanceof InvalidArgumentError && err.code === "invalid_argument",
      );
      const [rec] = await b.broker.getMessages([seq!]);
      assert.equal(rec!.state, "active", "nothing was claimed");
      assert.equal(rec!.deliveryCount, 0);
      const [m] = await b.broker.receiveAny([q], { lockDurationMs: MIN_LEASE_CAP_MS });
      const ref = { seqNumber: m!.seqNumber, lockToken: m!.lockToken! };
      for (const bad of [MIN_LEASE_CAP_MS - 1, MAX_DURATION_MS + 1]) {
        await assert.rejects(
          b.broker.renewBatch(q, [ref], { lockDurationMs: bad }),
          (err: unknown) => err instanceof InvalidArgumentError && err.code === "invalid_argument",
          `renewBatch refuses ${bad}`,
        );
      }
      const [held] = await b.broker.getMessages([m!.seqNumber]);
      assert.equal(held!.lockedUntil, m!.lockedUntil, "the lease is untouched");
    });

    it("a lapsed capped lease goes to another holder; the old token can neither renew nor settle", async () => {
      const q = `fence${++n}`;
      await b.broker.createQueue(q);
      await b.broker.send(q, [{ body: Buffer.from("x"), lockDurationMs: JOB_OWN_LEASE_MS }]);
      const [first] = await b.broker.receiveAny([q], { lockDurationMs: MIN_LEASE_CAP_MS });
      const other = await b.second();
      const [second] = await other.receiveAny([q], { waitMs: 10_000, lockDurationMs: 5000 });
      assert.ok(second, "claimed again once the first lease lapsed");
      assert.equal(second.seqNumber, first!.seqNumber);
      assert.equal(second.deliveryCount, 2);
      const [renewed] = await b.broker.renewBatch(
        q,
        [{ seqNumber: first!.seqNumber, lockToken: first!.lockToken! }],
        {
          lockDurationMs: 5000,
        },
      );
      assert.equal(renewed!.ok, false, "the old token renews nothing");
      await assert.rejects(b.broker.complete(q, first!.seqNumber, first!.lockToken!), LockLostError);
      await other.complete(q, second.seqNumber, second.lockToken!);
      const [rec] = await b.broker.getMessages([second.seqNumber]);
      assert.equal(rec, undefined, "completed once, by the second holder");
    });

    it("a handler running longer than leaseMs is renewed, not run again, while its worker lives", async () => {
      const ns = `long${++n}`;
      const leaseMs = 1200;
      const starts: string[] = [];
      const handler = (who: string) => async () => {
        starts.push(who);
        await sleep(leaseMs * 4);
        return who;
      };
      const a = new Queue({ broker: b.broker, namespace: ns, leaseMs }).task("long", handler("a"));
      const other = new Queue({ broker: await b.second(), namespace: ns, leaseMs }).task(
        "long",
        handler("b"),
      );
      const workerA = a.runWorker({ concurrency: 1 });
      const workerB = other.runWorker({ concurrency: 1 });
      assert.equal(workerA.leaseMs, leaseMs);
      const id = await a.enqueue("long", []);
      const who = await a.result<string>(id, { timeoutMs: leaseMs * 4 + 15_000 });
      assert.deepEqual(starts, [who], "started once, by the worker that finished it");
      const job = await a.getJob(id);
      assert.equal(job?.status, "complete");
      assert.equal(job?.retryCount, 0);
      assert.equal(job?.timeoutMs, DEFAULT_TIMEOUT_MS);
      await workerA.stop();
      await workerB.stop();
      await a.close();
      await other.close();
    });

    it("a worker that finds its lease lost aborts the handler and stores no outcome; the job runs again", async () => {
      const ns = `lost${++n}`;
      // Plays the reaper once: the first renewal finds the job already taken back (its token cleared).
      let taken = false;
      const broker = new Proxy(b.broker, {
        get(target, prop) {
          if (prop === "renewBatch") {
            return async (queue: string, items: LockRef[], options?: RenewBatchOptions) => {
              if (!taken) {
                taken = true;
                for (const i of items) await target.abandon(queue, i.seqNumber, i.lockToken);
              }
              return target.renewBatch(queue, items, options);
            };
          }
          const value = Reflect.get(target, prop, target) as unknown;
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      let reason: unknown;
      const queue = new Queue({ broker, namespace: ns, leaseMs: 1200 }).task("job", async () => {
        const { attempt, signal } = currentJob();
        if (attempt > 1) return `attempt ${attempt}`;
        return new Promise((_, reject) =>
          signal.addEventListener("abort", () => {
            reason = signal.reason;
            reject(signal.reason);
          }),
        );
      });
      const outcomes: string[] = [];
      for (const event of ["job.failed", "job.retrying", "job.completed", "job.dead"] as const)
        queue.on(event, (e) => outcomes.push(`${event} ${e.retryCount}`));
      const worker = queue.runWorker({ concurrency: 1 });
      const id = await queue.enqueue("job", []);
      assert.equal(await queue.result(id, { timeoutMs: 15_000 }), "attempt 2");
      assert.ok(reason instanceof LockLostError, "the first attempt's signal aborts with LockLostError");
      assert.deepEqual(outcomes, ["job.completed 1"], "no outcome for the attempt that lost its lease");
      assert.equal((await queue.getJobErrors(id)).length, 0);
      await worker.stop();
      await queue.close();
    });

    it("a worker leases for 30 s by default, not for the job's timeout", async () => {
      const ns = `dflt${++n}`;
      let release: () => void = () => {};
      const gate = new Promise<void>((r) => {
        release = r;
      });
      let running = false;
      const queue = new Queue({ broker: b.broker, namespace: ns }).task("wait", async () => {
        running = true;
        await gate;
      });
      const worker = queue.runWorker({ concurrency: 1 });
      assert.equal(worker.leaseMs, DEFAULT_LEASE_MS);
      assert.equal(DEFAULT_LEASE_MS, 30_000);
      const id = await queue.enqueue("wait", []);
      await eventually(() => running, 10_000, "the job to run");
      const [rec] = await b.broker.getMessages([Number(id)]);
      const leased = rec!.lockedUntil! - rec!.deliveredAt!;
      assert.ok(leased >= DEFAULT_LEASE_MS && leased < DEFAULT_LEASE_MS + 10_000, `leased for ${leased} ms`);
      release();
      await queue.result(id, { timeoutMs: 10_000 });
      await worker.stop();
      await queue.close();
    });
  });
}

describe("jobs: leaseMs is checked", () => {
  it("refuses a leaseMs out of bounds with a QueueError, on the queue and on a worker", async () => {
    for (const bad of [0, 999, -1, 1500.5, Number.NaN, MAX_DURATION_MS + 1, "30000"]) {
      assert.throws(
        () => new Queue({ dbPath: ":memory:", leaseMs: bad as number }),
        (err: unknown) => err instanceof QueueError && /leaseMs/.test(err.message),
        `Queue refuses ${String(bad)}`,
      );
    }
    const queue = new Queue({ dbPath: ":memory:", leaseMs: MIN_LEASE_CAP_MS });
    assert.throws(() => queue.runWorker({ leaseMs: 500 }), QueueError);
    await queue.close();
  });
});
