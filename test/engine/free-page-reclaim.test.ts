import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { silentLogger } from "../../src/contract/logger.js";
import { LONG_WRITE_ITEMS } from "../../src/core/port.js";
import { openDatabase, type SqliteDatabase } from "../../src/store/sqlite/database.js";
import {
  FreePageReclaimer,
  RECLAIM_MIN_FREE_PAGES,
  RECLAIM_STEP_PAGES,
} from "../../src/store/sqlite/free-page-reclaimer.js";
import { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";
import { tempDir } from "../support/temp.js";
import { countTurns } from "../support/turns.js";

const freePages = (db: Database.Database) => db.pragma("freelist_count", { simple: true }) as number;
const pageCount = (db: Database.Database) => db.pragma("page_count", { simple: true }) as number;

/** An mqlite file with about `pages` free pages: rows of one page each, inserted and deleted. */
function withFreePages(path: string, pages: number): SqliteDatabase {
  const db = openDatabase(path, { now: Date.now() });
  db.exec("CREATE TABLE filler (body BLOB)");
  const insert = db.prepare("INSERT INTO filler (body) VALUES (?)");
  const body = Buffer.alloc(3000, 1);
  db.transaction(() => {
    for (let i = 0; i < pages; i++) insert.run(body);
  })();
  db.exec("DELETE FROM filler");
  return db;
}

/** Runs `test` on a fresh file with about `pages` free pages (see `withFreePages`), then removes it. */
async function onFreePages(
  pages: number,
  test: (db: SqliteDatabase, path: string) => Promise<void>,
): Promise<void> {
  const tmp = tempDir();
  const path = tmp.file("mq.db");
  const db = withFreePages(path, pages);
  try {
    await test(db, path);
  } finally {
    db.close();
    tmp.cleanup();
  }
}

describe("SQLite: free pages are given back in steps", () => {
  it("a pass gives back every free page, the loop turning between steps of RECLAIM_STEP_PAGES", async () =>
    onFreePages(3000, async (db) => {
      const free = freePages(db);
      const pages = pageCount(db);
      assert.ok(free >= 3000, `${free} free pages to give back`);
      let passes = 0;
      const reclaimer = new FreePageReclaimer(
        db,
        () => true,
        () => passes++,
      );
      const turns = countTurns();
      await reclaimer.reclaim();
      const turned = turns.stop();
      assert.equal(freePages(db), 0);
      // The pointer-map pages that tracked the freed pages go too.
      assert.ok(pageCount(db) <= pages - free, `${pageCount(db)} pages left of ${pages}`);
      const steps = Math.ceil(free / RECLAIM_STEP_PAGES);
      assert.ok(turned >= steps - 1, `the loop turned ${turned} times over ${steps} steps`);
      assert.equal(passes, 1, "the checkpoint thread is woken once, after the pass");
    }));

  it("fewer than RECLAIM_MIN_FREE_PAGES free pages are left for reuse", async () =>
    onFreePages(RECLAIM_MIN_FREE_PAGES / 2, async (db) => {
      const free = freePages(db);
      assert.ok(free > 0 && free < RECLAIM_MIN_FREE_PAGES, `${free} free pages`);
      let passes = 0;
      await new FreePageReclaimer(
        db,
        () => true,
        () => passes++,
      ).reclaim();
      assert.equal(freePages(db), free);
      assert.equal(passes, 0, "nothing stepped, nothing to checkpoint");
    }));

  it("a pass ends when the writer may not be interrupted, and the next one resumes", async () =>
    onFreePages(3000, async (db) => {
      const free = freePages(db);
      let allowed = 2;
      const reclaimer = new FreePageReclaimer(db, () => allowed-- > 0);
      await reclaimer.reclaim();
      assert.equal(freePages(db), free - 2 * RECLAIM_STEP_PAGES, "two steps, then the pass ended");
      allowed = Number.POSITIVE_INFINITY;
      await reclaimer.reclaim();
      assert.equal(freePages(db), 0);
    }));

  it("a step does not wait for another connection's write lock: the pass ends, and the next one resumes", async () =>
    onFreePages(3000, async (db, path) => {
      const other = new Database(path);
      try {
        db.pragma("busy_timeout = 20000");
        const free = freePages(db);
        const reclaimer = new FreePageReclaimer(db, () => true);
        other.exec("BEGIN IMMEDIATE");
        const started = performance.now();
        await reclaimer.reclaim();
        const waited = performance.now() - started;
        other.exec("COMMIT");
        assert.ok(waited < 10_000, `the step waited ${Math.round(waited)} ms for the lock`);
        assert.equal(freePages(db), free, "nothing given back while the lock was held");
        assert.equal(db.pragma("busy_timeout", { simple: true }), 20000, "the busy timeout is restored");
        await reclaimer.reclaim();
        assert.equal(freePages(db), 0);
      } finally {
        other.close();
      }
    }));

  it("one pass at a time: a second call joins the running pass", async () =>
    onFreePages(1000, async (db) => {
      let passes = 0;
      const reclaimer = new FreePageReclaimer(
        db,
        () => true,
        () => passes++,
      );
      const first = reclaimer.reclaim();
      assert.equal(reclaimer.reclaim(), first);
      await first;
      assert.equal(passes, 1);
      assert.equal(freePages(db), 0);
    }));

  it("a pass ends quietly when the connection closes under it", async () =>
    onFreePages(3000, async (db, path) => {
      const free = freePages(db);
      const pass = new FreePageReclaimer(db, () => true).reclaim();
      db.close();
      await pass;
      const other = new Database(path);
      const left = freePages(other);
      other.close();
      assert.ok(left > 0 && left < free, `one step made before the close (${left} of ${free} left)`);
    }));
});

describe("SQLite broker: reclaiming free pages beside its writes", () => {
  const body = Buffer.alloc(3000, 2);
  /** A broker whose file has about 4,000 free pages: a queue of page-sized messages, deleted. */
  async function brokerWithFreePages(file: string): Promise<SqliteBroker> {
    const b = new SqliteBroker(file, { logger: silentLogger, background: false });
    await b.createQueue("filler");
    await b.send(
      "filler",
      Array.from({ length: 4000 }, () => ({ body })),
    );
    await b.deleteQueue("filler");
    await b.createQueue("q");
    return b;
  }
  const reclaimerOf = (b: SqliteBroker) => (b as unknown as { reclaimer: FreePageReclaimer }).reclaimer;

  /** Runs `test` on such a broker, with a read-only connection to its file beside it. */
  async function onBroker(
    test: (b: SqliteBroker, reader: Database.Database) => Promise<void>,
  ): Promise<void> {
    const tmp = tempDir();
    const b = await brokerWithFreePages(tmp.file("mq.db"));
    const reader = new Database(tmp.file("mq.db"), { readonly: true });
    try {
      await test(b, reader);
    } finally {
      reader.close();
      await b.close();
      tmp.cleanup();
    }
  }

  it("runMaintenanceOnce gives every free page back", async () =>
    onBroker(async (b, reader) => {
      assert.ok(freePages(reader) >= 4000, `${freePages(reader)} free pages`);
      await b.runMaintenanceOnce();
      assert.equal(freePages(reader), 0);
    }));

  it("sends commit between the steps of a pass, and none is lost", async () =>
    onBroker(async (b, reader) => {
      const before = freePages(reader);
      const pass = reclaimerOf(b).reclaim();
      let ended = false;
      void pass.then(() => {
        ended = true;
      });
      // The free pages each send saw committed: some lie strictly between all and none.
      const seen: number[] = [];
      let sent = 0;
      while (!ended) {
        await b.send("q", [{ body: Buffer.from(`m${sent}`) }]);
        sent++;
        seen.push(freePages(reader));
      }
      assert.ok(
        seen.some((n) => n > 0 && n < before - RECLAIM_STEP_PAGES),
        `a send committed mid-pass (free pages seen: ${seen.join(", ")})`,
      );
      assert.equal(freePages(reader), 0);
      assert.equal((await b.stats("q")).active, sent);
    }));

  it("a long write ends the pass, and the next pass gives back the rest", async () =>
    onBroker(async (b, reader) => {
      const writer = (b as unknown as { writer: { busy: boolean } }).writer;
      const pass = reclaimerOf(b).reclaim();
      const long = b.send(
        "q",
        Array.from({ length: 10 * LONG_WRITE_ITEMS }, () => ({ body: Buffer.alloc(2400, 3) })),
      );
      await pass;
      assert.equal(writer.busy, true, "the pass ended while the long write held the transaction open");
      await long;
      await b.runMaintenanceOnce();
      assert.equal(freePages(reader), 0);
      assert.equal((await b.stats("q")).active, 10 * LONG_WRITE_ITEMS);
    }));
});
