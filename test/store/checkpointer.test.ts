import assert from "node:assert/strict";
import { existsSync, statSync } from "node:fs";
import { after, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { CHECKPOINT_INTERVAL_MS, checkpointInBackground } from "../../src/store/sqlite/checkpointer.js";
import { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";
import { collectLines, spawnChild } from "../support/child.js";
import { eventually, sleep } from "../support/eventually.js";
import { tempDir } from "../support/temp.js";

// Loops off: nothing but a commit or the thread may checkpoint.
const quiet = { background: false, logger: silentLogger } as const;
const BODY = "x".repeat(4096);
/** 200 bodies of 4 KiB: about 250 pages, far below the 4000 at which a commit checkpoints itself. */
const SENT_BYTES = 200 * BODY.length;
const bodies = () => Array.from({ length: 200 }, () => ({ body: BODY }));

async function fill(path: string, checkpointThread: boolean) {
  const broker = new SqliteBroker(path, { ...quiet, checkpointThread });
  await broker.createQueue("q");
  await broker.send("q", bodies());
  return broker;
}

/**
 * Opens a broker, lets the thread fall asleep (a pass that finds nothing new), then runs `write`:
 * its commit must wake the thread, which copies the pages well before its idle timeout (5 s).
 */
async function copiedAfterSleep(path: string, write: (broker: SqliteBroker) => Promise<unknown>) {
  const broker = new SqliteBroker(path, quiet);
  try {
    await broker.createQueue("q");
    await sleep(CHECKPOINT_INTERVAL_MS * 10);
    const before = statSync(path).size;
    await write(broker);
    await eventually(() => statSync(path).size >= before + SENT_BYTES, 2000, "the commit to wake the thread");
  } finally {
    await broker.close();
  }
}

describe("store: background checkpoints", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("copies committed pages into the file while the WAL is far below the commit's threshold", async () => {
    const path = tmp.file("thread.db");
    const broker = await fill(path, true);
    try {
      await eventually(
        () => statSync(path).size >= SENT_BYTES,
        5000,
        `the file to hold the ${SENT_BYTES} bytes sent`,
      );
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
    await copiedAfterSleep(tmp.file("asleep.db"), (broker) => broker.send("q", bodies()));
  });

  it("sees a commit that ends after a pass found nothing (a transaction longer than its interval)", async () => {
    await copiedAfterSleep(tmp.file("long-tx.db"), (broker) =>
      broker.tx((t) => {
        t.send("q", bodies());
        // Held open for several of the thread's intervals: its passes meanwhile find nothing new.
        const until = performance.now() + CHECKPOINT_INTERVAL_MS * 5;
        while (performance.now() < until) {}
      }),
    );
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
    await eventually(() => errors.length > 0, 5000, "the failure to be reported");
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
