// A random mix of every operation that moves a message between states, for checking the kept
// per-queue counts against a full count: sends (plain, scheduled, with TTL), receives in both
// modes, the four settlements (abandon with and without a delay, so some messages back off),
// deferral and its receive, cancel, renew, complete-and-retain, dead-letter redrive and purge,
// and dropping and recreating a queue.

import type { Broker } from "../../src/contract/broker.js";
import type { JobService } from "../../src/contract/job-service.js";

export const WORKLOAD_QUEUES = ["wa", "wb", "wc"] as const;

/** A small deterministic PRNG (mulberry32), so a failing run can be replayed by its seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function createWorkloadQueues(broker: Broker): Promise<void> {
  for (const q of WORKLOAD_QUEUES)
    await broker.createQueue(q, { maxDeliveryCount: 3, lockDurationMs: 60_000 });
}

/** One random step. Errors a step may meet by design (a lost lock, a deleted queue) are part of it. */
export async function randomStep(broker: Broker & Partial<JobService>, random: () => number): Promise<void> {
  const q = WORKLOAD_QUEUES[Math.floor(random() * WORKLOAD_QUEUES.length)]!;
  const pick = random();
  const expected = (err: unknown) => {
    const code = (err as { code?: string }).code;
    if (code !== "lock_lost" && code !== "not_found") throw err;
  };
  try {
    if (pick < 0.3) {
      const n = 1 + Math.floor(random() * 4);
      const ttlMs = random() < 0.2 ? 1 : undefined;
      await broker.send(
        q,
        Array.from({ length: n }, (_, i) => ({ body: `b${i}` })),
        ttlMs ? { ttlMs } : {},
      );
    } else if (pick < 0.36) {
      // A time 20 ms ahead may have passed when a loaded machine stores it: refused, as it should be.
      await broker
        .schedule(q, { body: "later" }, Date.now() + (random() < 0.5 ? 20 : 60_000))
        .catch((err: { code?: string }) => {
          if (err.code !== "invalid_argument") throw err;
        });
    } else if (pick < 0.75) {
      const deleteMode = random() < 0.15;
      const got = await broker.receive(q, {
        maxMessages: 1 + Math.floor(random() * 3),
        ...(deleteMode && { mode: "receive-and-delete" as const }),
      });
      for (const m of deleteMode ? [] : got) {
        const r = random();
        const token = m.lockToken!;
        if (r < 0.3) await broker.complete(q, m.seqNumber, token);
        else if (r < 0.4) await broker.complete(q, m.seqNumber, token, { retainMs: 60_000 });
        else if (r < 0.55) await broker.abandon(q, m.seqNumber, token);
        else if (r < 0.65)
          await broker.abandon(q, m.seqNumber, token, { delayMs: random() < 0.5 ? 5 : 60_000 });
        else if (r < 0.75) await broker.reject(q, m.seqNumber, token);
        else if (r < 0.85) await broker.defer(q, m.seqNumber, token);
        else if (r < 0.9) await broker.renew(q, m.seqNumber, token);
        // else: left locked
      }
    } else if (pick < 0.8) {
      const deferred = await broker.peek(q, { state: "deferred", max: 3 });
      const got = await broker.receiveDeferred(
        q,
        deferred.map((m) => m.seqNumber),
      );
      for (const m of got) await broker.complete(q, m.seqNumber, m.lockToken!);
    } else if (pick < 0.84) {
      const [s] = await broker.peek(q, { state: "scheduled", max: 1 });
      if (s && s.deliveryCount === 0) await broker.cancel(q, s.seqNumber);
    } else if (pick < 0.9) {
      await broker.redrive(q, { max: 3 });
    } else if (pick < 0.93) {
      await broker.purge(q, { max: 2 });
    } else if (pick < 0.95 && broker.deleteSettled) {
      await broker.deleteSettled(q, { states: ["completed"] });
    } else if (pick < 0.96) {
      await broker.deleteQueue(q);
      await broker.createQueue(q, { maxDeliveryCount: 3, lockDurationMs: 60_000 });
    } else {
      const other = WORKLOAD_QUEUES[(WORKLOAD_QUEUES.indexOf(q) + 1) % WORKLOAD_QUEUES.length]!;
      await broker.redrive(q, { target: other, max: 2 });
    }
  } catch (err) {
    expected(err);
  }
}
