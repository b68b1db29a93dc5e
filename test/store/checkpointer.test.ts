import assert from "node:assert/strict";
import { existsSync, statSync } from "node:fs";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { silentLogger } from "../../src/engine/logger.js";
import { openBroker } from "../../src/engine/open.js";
import { CHECKPOINT_INTERVAL_MS, checkpointInBackground } from "../../src/store/checkpointer.js";
import { collectLines, spawnChild } from "../support/child.js";
import { tempDir } from "../support/temp.js";

// Loops off: nothing but a commit or the thread may checkpoint.
const quiet = { background: false, logger: silentLogger } as const;
const BODY = "x".repeat(4096);
/** 200 bodies of 4 KiB: about 250 pages, far below the 4000 at which a commit checkpoints itself. */
const SENT_BYTES = 200 * BODY.length;

async function fill(path: string, checkpointThread: boolean) {
  const broker = await openBroker(path, { ...quiet, checkpointThread });
  await broker.createQueue("q");
  await broker.send(
    "q",
    Array.from({ length: 200 }, () => ({ body: BODY })),
  );
  return broker;
}

/** Polls `cond` until it holds or `ms` pass. */
async function eventually(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await sleep(5);
  }
  return true;
}

describe("store: background checkpoints", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("copies committed pages into the file while the WAL is far below the commit's threshold", async () => {
    const path = tmp.file("thread.db");
    const broker = await fill(path, true);
    try {
      const copied = await eventually(() => statSync(path).size >= SENT_BYTES, 5000);
      assert.ok(copied, `the file holds ${statSync(path).size} bytes, not the ${SENT_BYTES} sent`);
      // Still readable and whole from the writer's side.
      assert.equal((await broker.stats("q")).active, 200);
    } finally {
      await broker.close();
    }
  });

  it("without the thread, the same commits stay in the WAL", async () => {
    const path = tmp.file("no-thread.db");
    const broker = await fill(path, false);
    try {
      await sleep(CHECKPOINT_INTERVAL_MS * 20);
      assert.ok(statSync(path).size < SENT_BYTES, "nothing checkpointed the file");
    } finally {
      await broker.close();
    }
  });

  it("wakes for writes that come after it fell asleep", async () => {
    const path = tmp.file("asleep.db");
    const broker = await openBroker(path, quiet);
    try {
      await broker.createQueue("q");
      // Long enough for a pass that finds nothing new, after which the thread sleeps until nudged.
      await sleep(CHECKPOINT_INTERVAL_MS * 10);
      const before = statSync(path).size;
      await broker.send(
        "q",
        Array.from({ length: 200 }, () => ({ body: BODY })),
      );
      const copied = await eventually(() => statSync(path).size >= before + SENT_BYTES, 2000);
      assert.ok(copied, "the commit woke the thread well before its idle timeout (5 s)");
    } finally {
      await broker.close();
    }
  });

  it("sees a commit that ends after a pass found nothing (a transaction longer than its interval)", async () => {
    const path = tmp.file("long-tx.db");
    const broker = await openBroker(path, quiet);
    try {
      await broker.createQueue("q");
      await sleep(CHECKPOINT_INTERVAL_MS * 10);
      const before = statSync(path).size;
      await broker.tx((t) => {
        t.send(
          "q",
          Array.from({ length: 200 }, () => ({ body: BODY })),
        );
        // Held open for several of the thread's intervals: its passes meanwhile find nothing new.
        const until = performance.now() + CHECKPOINT_INTERVAL_MS * 5;
        while (performance.now() < until) {}
      });
      const copied = await eventually(() => statSync(path).size >= before + SENT_BYTES, 2000);
      assert.ok(copied, "the commit woke the thread well before its idle timeout (5 s)");
    } finally {
      await broker.close();
    }
  });

  it("close() closes the thread's connection first, so the WAL goes with the broker's", async () => {
    const path = tmp.file("close.db");
    const broker = await fill(path, true);
    await broker.close();
    assert.equal(existsSync(`${path}-wal`), false);
    assert.equal(existsSync(`${path}-shm`), false);
  });

  it("reports a file it cannot open, and a close still resolves", async () => {
    const errors: Error[] = [];
    const file = checkpointInBackground(tmp.file("missing/none.db"), "normal", (err) => errors.push(err));
    assert.ok(await eventually(() => errors.length > 0, 5000), "the failure was reported");
    await file.close();
  });

  for (const mode of ["close", "leave-open"]) {
    it(`holds no reference on the process (${mode})`, async () => {
      const child = spawnChild("checkpoint-child.ts", [tmp.file(`child-${mode}.db`), mode]);
      const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      const { lines, code, signal, stderr } = await collectLines(child);
      clearTimeout(killer);
      assert.deepEqual(lines, ["SENT"], stderr);
      assert.equal(signal, null, "the process exited on its own");
      assert.equal(code, 0, stderr);
    });
  }
});
