import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import { LONG_WRITE_ITEMS } from "../../src/core/port.js";
import { openBroker } from "../../src/open.js";
import { WAL_AUTOCHECKPOINT_FRAMES } from "../../src/store/sqlite/database.js";
import { tempDir } from "../support/temp.js";

// A send or CompleteBatch of LONG_WRITE_ITEMS or more runs alone, in slices, with the event loop
// turning between them (the writer's side is in test/store/writer.test.ts).

const sent = (b: Broker, n: number, body: Buffer) =>
  b.send(
    "q",
    Array.from({ length: n }, () => ({ body })),
  );

describe("SQLite: long writes", () => {
  it("the event loop turns while a maximal send is stored; a read made meanwhile sees it whole", async () => {
    const tmp = tempDir();
    const b = await openBroker(tmp.file("mq.db"), { logger: silentLogger });
    try {
      await b.createQueue("q");
      const body = Buffer.alloc(2400, 7);
      const n = 10 * LONG_WRITE_ITEMS;
      const writer = (b as unknown as { writer: { busy: boolean } }).writer;
      let turns = 0;
      let done = false;
      // Made on a turn of the loop while the send's transaction is open: it runs after the commit.
      let during: Promise<number> | undefined;
      const tick = () => {
        if (writer.busy) {
          turns++;
          during ??= b.stats("q").then((s) => s.active);
        }
        if (!done) setImmediate(tick);
      };
      setImmediate(tick);
      const seqs = await sent(b, n, body);
      done = true;
      assert.equal(seqs.length, n);
      assert.ok(turns >= 3, `the loop turned ${turns} times while 24 MB were stored`);
      assert.ok(during, "a read was made while the send ran");
      assert.equal(await during, n);
    } finally {
      await b.close();
      tmp.cleanup();
    }
  });

  it("a long write's commit leaves its frames to the checkpoint thread, and the commits' own checkpoints come back", async () => {
    const tmp = tempDir();
    const file = tmp.file("mq.db");
    const b = await openBroker(file, { logger: silentLogger });
    // The setting is the broker connection's own: read on it.
    try {
      await b.createQueue("q");
      const autocheckpoint = () =>
        (b as unknown as { db: Database.Database }).db.pragma("wal_autocheckpoint", { simple: true });
      assert.equal(autocheckpoint(), WAL_AUTOCHECKPOINT_FRAMES);
      await b.send(
        "q",
        Array.from({ length: LONG_WRITE_ITEMS }, () => ({ body: "x" })),
      );
      assert.equal(autocheckpoint(), 0);
      await new Promise((resolve) => setTimeout(resolve, 2200));
      assert.equal(autocheckpoint(), WAL_AUTOCHECKPOINT_FRAMES);
      const peer = new Database(file, { readonly: true });
      assert.equal(
        (peer.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n,
        LONG_WRITE_ITEMS,
      );
      peer.close();
    } finally {
      await b.close();
      tmp.cleanup();
    }
  });
});
