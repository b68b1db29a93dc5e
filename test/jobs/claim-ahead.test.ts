import assert from "node:assert/strict";
import { it } from "node:test";
import type { Broker } from "../../src/contract/broker.js";
import { eventually, sleep } from "./helpers.js";
import { onEverySubject } from "./subject-queues.js";

/**
 * Every claim the worker made: the jobs started and claimed before it was sent, how many it asked
 * for and how many it got.
 */
interface ClaimSeen {
  startedBefore: number;
  claimedBefore: number;
  asked: number;
  got: number;
  answered: boolean;
}

/**
 * The subject's broker with each claim answered `delayMs` later, as a server farther away would
 * answer it; `started` is read when a claim is sent (the handlers count their starts into it).
 */
function distantClaims(
  broker: Broker,
  delayMs: number,
  started: () => number,
): { broker: Broker; claims: ClaimSeen[] } {
  const claims: ClaimSeen[] = [];
  let claimed = 0;
  const receiveAny: Broker["receiveAny"] = async (queues, options) => {
    const seen = {
      startedBefore: started(),
      claimedBefore: claimed,
      asked: options?.maxMessages ?? 1,
      got: 0,
      answered: false,
    };
    claims.push(seen);
    await sleep(delayMs);
    const got = await broker.receiveAny(queues, options);
    seen.got = got.length;
    seen.answered = true;
    claimed += got.length;
    return got;
  };
  const distant = new Proxy(broker, {
    get(target, prop) {
      if (prop === "receiveAny") return receiveAny;
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { broker: distant, claims };
}

onEverySubject("jobs: claiming ahead when a claim waits on a server", (s) => {
  it("sends the next claim while claimed jobs still wait, and runs every job once, in order", async () => {
    const ran: number[] = [];
    const { broker, claims } = distantClaims(await s.queue().broker(), 5, () => ran.length);
    const queue = s.queue({}, broker).task("rec", (i: number) => {
      ran.push(i);
    });
    await queue.enqueueMany(
      "rec",
      Array.from({ length: 40 }, (_, i) => ({ args: [i] as [number] })),
    );
    const worker = queue.runWorker({ concurrency: 1, batchSize: 8 });
    await eventually(() => ran.length === 40, 10_000, "40 jobs");
    await worker.stop();
    assert.deepEqual(
      ran,
      Array.from({ length: 40 }, (_, i) => i),
    );
    const ahead = claims.filter((c) => c.startedBefore < c.claimedBefore);
    assert.ok(
      ahead.length > 0,
      `a claim was sent before the claimed jobs had all started: ${JSON.stringify(claims)}`,
    );
    for (const c of ahead) {
      assert.ok(
        c.claimedBefore - c.startedBefore <= 4,
        `a claim ahead is sent once at most half a batch waits: ${JSON.stringify(c)}`,
      );
      // Waiting: the buffer, and at most the one job launched whose handler has not begun.
      assert.ok(
        c.claimedBefore - c.startedBefore + c.asked <= 8 + 4 + 1,
        `a worker holds at most a batch and a half waiting: ${JSON.stringify(c)}`,
      );
    }
  });

  it("stopping while a claim ahead is under way puts its jobs back without spending an attempt", async () => {
    const ran: number[] = [];
    const { broker, claims } = distantClaims(await s.queue().broker(), 30, () => ran.length);
    let stopping: Promise<void> | undefined;
    const queue = s.queue({}, broker).task("rec", (i: number) => {
      ran.push(i);
      // Stops while a claim ahead is in flight: sent before the jobs claimed had all started (once
      // the first jobs showed they are short and at most half a batch waits), not yet answered.
      // Which job that is depends on how long the first jobs took: not a fixed one.
      if (!stopping && claims.some((c) => c.startedBefore < c.claimedBefore && !c.answered))
        stopping = worker.stop();
    });
    const ids = await queue.enqueueMany(
      "rec",
      Array.from({ length: 12 }, (_, i) => ({ args: [i] as [number] })),
    );
    const worker = queue.runWorker({ concurrency: 1, batchSize: 4 });
    await eventually(() => stopping !== undefined, 10_000, "a claim ahead, and the worker to stop");
    await stopping;
    assert.ok(ran.length < ids.length, `the worker stopped before the last job: ${JSON.stringify(ran)}`);
    assert.deepEqual(
      ran,
      Array.from({ length: ran.length }, (_, i) => i),
    );
    assert.ok(
      claims.some((c) => c.startedBefore < c.claimedBefore && c.got > 0),
      `a claim ahead took jobs: ${JSON.stringify(claims)}`,
    );
    for (const [i, id] of ids.entries()) {
      const job = await queue.getJob(id);
      assert.ok(job, `job ${i}`);
      if (i < ran.length) assert.equal(job.status, "complete", `job ${i}`);
      else {
        assert.equal(job.status, "pending", `job ${i} is back in the queue`);
        assert.equal(job.retryCount, 0, `job ${i} spent no attempt`);
      }
    }
  });
});
