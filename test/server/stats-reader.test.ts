import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Broker } from "../../src/contract/broker.js";
import type { QueueStats } from "../../src/contract/types.js";
import { StatsReader } from "../../src/server/events.js";

/** A broker whose Stats advances a fake clock by a queue's cost and counts the reads. */
function fakeBroker(clock: { now: number }, costMs: Record<string, number>) {
  const reads: string[] = [];
  const broker = {
    async stats(queue: string): Promise<QueueStats> {
      reads.push(queue);
      clock.now += costMs[queue] ?? 0;
      return { queue, active: reads.length } as unknown as QueueStats;
    },
  } as unknown as Broker;
  return { broker, reads };
}

describe("console feed: Stats reads bounded by their cost", () => {
  it("reads a cheap queue every time and a costly one only after 20× its cost has passed", async () => {
    const clock = { now: 0 };
    const { broker, reads } = fakeBroker(clock, { small: 0.1, huge: 200 });
    const reader = new StatsReader(broker, () => clock.now);
    const hugeSeen: number[] = [];
    for (let tick = 0; tick < 10; tick++) {
      await reader.read("small");
      hugeSeen.push((await reader.read("huge")).active);
      clock.now = (tick + 1) * 1000; // one snapshot a second
    }
    assert.equal(reads.filter((q) => q === "small").length, 10);
    // 200 ms a read: one read per 4 s (at 0, 4 and 8 s).
    const hugeReads = reads.filter((q) => q === "huge").length;
    assert.equal(hugeReads, 3);
    // Between reads the last counts are shown.
    assert.equal(new Set(hugeSeen).size, hugeReads);
  });

  it("forgets queues that are gone", async () => {
    const clock = { now: 0 };
    const { broker, reads } = fakeBroker(clock, { q: 500 });
    const reader = new StatsReader(broker, () => clock.now);
    await reader.read("q");
    await reader.read("q");
    assert.equal(reads.length, 1);
    reader.keepOnly(new Set());
    await reader.read("q");
    assert.equal(reads.length, 2, "a queue created again under the name is read afresh");
  });
});
