// The per-queue counts Stats reads (kept by the statements that insert and claim, and by triggers)
// equal a full count of the messages after a random workload, and after the process running it is
// killed mid-way.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { collectLines, spawnChild } from "../support/child.js";
import { createWorkloadQueues, randomStep, rng, WORKLOAD_QUEUES } from "../support/random-workload.js";
import { tempDir } from "../support/temp.js";

interface Counted {
  byState: Record<string, number>;
  backingOff: number;
}

/** Counts every message of a queue the slow way, straight from the file. */
function fullCount(path: string, queue: string): Counted {
  const db = new Database(path, { readonly: true });
  try {
    const byState: Record<string, number> = {};
    for (const r of db
      .prepare("SELECT state, count(*) AS n FROM messages WHERE queue = ? GROUP BY state")
      .all(queue) as { state: string; n: number }[]) {
      byState[r.state] = r.n;
    }
    const { n } = db
      .prepare(
        "SELECT count(*) AS n FROM messages WHERE queue = ? AND state = 'scheduled' AND delivery_count > 0",
      )
      .get(queue) as { n: number };
    return { byState, backingOff: n };
  } finally {
    db.close();
  }
}

async function assertCountsMatch(path: string): Promise<number> {
  const broker = await openBroker(path, { background: false, logger: silentLogger });
  let total = 0;
  try {
    for (const q of WORKLOAD_QUEUES) {
      const s = await broker.stats(q);
      const full = fullCount(path, q);
      const kept = {
        byState: Object.fromEntries(
          (
            [
              ["active", s.active],
              ["locked", s.locked],
              ["deferred", s.deferred],
              ["scheduled", s.scheduled],
              ["completed", s.completed],
              ["cancelled", s.cancelled],
              ["dead_lettered", s.deadLettered],
            ] as const
          ).filter(([, n]) => n !== 0),
        ),
        backingOff: s.backingOff,
      };
      assert.deepEqual(kept, full, `queue ${q}`);
      assert.equal(
        s.total,
        Object.values(full.byState).reduce((a, b) => a + b, 0),
        `queue ${q} total`,
      );
      total += s.total;
    }
  } finally {
    await broker.close();
  }
  return total;
}

describe("kept queue counts", () => {
  it("equal a full count after a random workload of every state change", async () => {
    const dir = tempDir();
    const path = dir.file("counts.db");
    try {
      const broker = await openBroker(path, { logger: silentLogger });
      await createWorkloadQueues(broker);
      const random = rng(20261203);
      for (let i = 0; i < 1500; i++) await randomStep(broker, random);
      await broker.close();
      const total = await assertCountsMatch(path);
      assert.ok(total > 0, "the workload left messages to count");
    } finally {
      dir.cleanup();
    }
  });

  it("count out locked messages deleted by a completion, receive-and-delete, expiry and their queue's deletion", async () => {
    const dir = tempDir();
    const path = dir.file("locked.db");
    try {
      const broker = await openBroker(path, { background: false, logger: silentLogger });
      const counted = async (what: string) => {
        const s = await broker.stats("x");
        const full = fullCount(path, "x");
        assert.deepEqual(
          { active: s.active, locked: s.locked, completed: s.completed },
          {
            active: full.byState.active ?? 0,
            locked: full.byState.locked ?? 0,
            completed: full.byState.completed ?? 0,
          },
          what,
        );
        return s;
      };
      // Expired messages are deleted, not dead-lettered.
      await broker.createQueue("x", { deadLetterOnExpire: false });
      await broker.send("x", [{ body: "a" }, { body: "b" }, { body: "c" }]);
      const [a, b, c] = await broker.receive("x", { maxMessages: 3 });
      assert.equal((await counted("three claimed")).locked, 3);
      const outcomes = await broker.completeBatch("x", [
        { seqNumber: a!.seqNumber, lockToken: a!.lockToken! },
        { seqNumber: b!.seqNumber, lockToken: b!.lockToken!, retainMs: 60_000 },
        { seqNumber: c!.seqNumber, lockToken: "0".repeat(32) },
      ]);
      assert.equal(outcomes.length, 3);
      let s = await counted("one deleted, one kept, one missed");
      assert.deepEqual([s.locked, s.completed], [1, 1]);
      await broker.complete("x", c!.seqNumber, c!.lockToken!);
      assert.equal((await counted("the last completed")).locked, 0);

      await broker.send("x", { body: "d" });
      assert.equal((await broker.receive("x", { mode: "receive-and-delete" })).length, 1);
      assert.equal((await counted("received and deleted")).active, 0);

      await broker.send("x", { body: "e" }, { ttlMs: 30 });
      assert.equal((await broker.receive("x")).length, 1);
      await new Promise((r) => setTimeout(r, 60));
      await broker.runMaintenanceOnce();
      s = await counted("a locked message expired");
      assert.deepEqual(fullCount(path, "x").byState, { completed: 1 }, "expiry deleted the locked message");
      assert.equal(s.locked, 0);

      await broker.send("x", { body: "f" });
      assert.equal((await broker.receive("x")).length, 1);
      await broker.deleteQueue("x");
      await broker.createQueue("x");
      s = await counted("its queue deleted with a locked message, then created again");
      assert.equal(s.total, 0);
      await broker.close();
    } finally {
      dir.cleanup();
    }
  });

  it("equal a full count after the process running the workload is killed (SIGKILL)", async () => {
    const dir = tempDir();
    const path = dir.file("crash.db");
    try {
      for (const seed of [1, 2]) {
        const child = spawnChild("counts-child.ts", [path, String(seed)]);
        let steps = 0;
        const done = collectLines(child, () => {
          if (++steps === 400) child.kill("SIGKILL");
        });
        const { signal, stderr } = await done;
        assert.equal(signal, "SIGKILL", stderr);
        assert.ok(steps >= 400, `the child ran ${steps} steps`);
        await assertCountsMatch(path);
      }
    } finally {
      dir.cleanup();
    }
  });
});
