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

  it("a long write runs with a 2 MB page cache, and the connection's own comes back after its commit or rollback", async () => {
    const tmp = tempDir();
    const b = await openBroker(tmp.file("mq.db"), { logger: silentLogger });
    try {
      await b.createQueue("q");
      const db = (b as unknown as { db: Database.Database }).db;
      const writer = (b as unknown as { writer: { busy: boolean } }).writer;
      const own = db.pragma("cache_size", { simple: true });
      const during: unknown[] = [];
      let done = false;
      const tick = () => {
        if (writer.busy) during.push(db.pragma("cache_size", { simple: true }));
        if (!done) setImmediate(tick);
      };
      setImmediate(tick);
      await sent(b, 4 * LONG_WRITE_ITEMS, Buffer.alloc(2400, 7));
      assert.ok(during.length > 0, "the loop turned while the send was stored");
      assert.deepEqual([...new Set(during)], [-2000]);
      assert.equal(db.pragma("cache_size", { simple: true }), own);

      // A long write that fails midway (a trigger refuses its last row) is rolled back whole.
      db.exec(`CREATE TRIGGER refuse AFTER INSERT ON messages WHEN new.body = x'ff'
               BEGIN SELECT RAISE(ABORT, 'refused'); END`);
      const bodies = Array.from({ length: LONG_WRITE_ITEMS }, (_, i) => ({
        body: Buffer.from([i === LONG_WRITE_ITEMS - 1 ? 0xff : 1]),
      }));
      await assert.rejects(b.send("q", bodies));
      done = true;
      assert.equal(db.pragma("cache_size", { simple: true }), own);
      assert.equal((await b.stats("q")).active, 4 * LONG_WRITE_ITEMS);
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
