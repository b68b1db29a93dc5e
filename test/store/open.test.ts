import assert from "node:assert/strict";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import {
  DbLockedError,
  InvalidArgumentError,
  NotMqliteDatabaseError,
  SchemaVersionMismatchError,
} from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import {
  openDatabase,
  WAL_AUTOCHECKPOINT_FRAMES,
  WAL_SIZE_LIMIT_BYTES,
} from "../../src/store/sqlite/database.js";
import { LATEST_SCHEMA_VERSION } from "../../src/store/sqlite/migrations/index.js";
import { parseSyncMode } from "../../src/store/sqlite/sync-mode.js";
import { tempDir } from "../support/temp.js";

const quiet = { background: false, logger: silentLogger } as const;

describe("store: opening a database", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("creates a fresh file in WAL mode with the chosen synchronous setting and the latest schema", async () => {
    const path = tmp.file("fresh/nested/mq.db");
    const broker = await openBroker(path, { ...quiet, synchronous: "full" });
    await broker.createQueue("q");
    await broker.close();
    const db = new Database(path, { readonly: true });
    assert.equal(db.pragma("journal_mode", { simple: true }), "wal");
    const version = db.prepare("SELECT max(version) AS v FROM schema_version").get() as { v: number };
    assert.equal(version.v, LATEST_SCHEMA_VERSION);
    db.close();
  });

  it("checkpoints the WAL every WAL_AUTOCHECKPOINT_FRAMES pages, not at SQLite's default 1000", () => {
    const db = openDatabase(tmp.file("checkpoint.db"), { now: Date.now() });
    try {
      assert.equal(db.pragma("wal_autocheckpoint", { simple: true }), WAL_AUTOCHECKPOINT_FRAMES);
      db.exec("CREATE TABLE t (v BLOB)");
      const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
      const page = Buffer.alloc(3000);
      // One new page per commit (plus page 1): past 1000 frames, short of 4000.
      for (let i = 0; i < 900; i++) insert.run(page);
      const [waiting] = db.pragma("wal_checkpoint(PASSIVE)") as { log: number }[];
      assert.ok(waiting!.log > 1000 && waiting!.log < WAL_AUTOCHECKPOINT_FRAMES, `${waiting!.log} frames`);
    } finally {
      db.close();
    }
  });

  it("cuts a grown WAL file back to WAL_SIZE_LIMIT_BYTES when it starts over after a checkpoint", () => {
    const path = tmp.file("wal-limit.db");
    const db = openDatabase(path, { now: Date.now() });
    try {
      db.exec("CREATE TABLE t (v BLOB)");
      const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
      const page = Buffer.alloc(3000);
      // One transaction of about 1.5 times the limit: the WAL must hold it whole.
      const pages = Math.ceil((1.5 * WAL_SIZE_LIMIT_BYTES) / 4096);
      db.transaction(() => {
        for (let i = 0; i < pages; i++) insert.run(page);
      })();
      const grown = statSync(`${path}-wal`).size;
      assert.ok(grown > WAL_SIZE_LIMIT_BYTES, `the WAL grew to ${grown} bytes`);
      db.pragma("wal_checkpoint(PASSIVE)");
      insert.run(page); // starts the WAL over
      const cut = statSync(`${path}-wal`).size;
      assert.ok(cut <= WAL_SIZE_LIMIT_BYTES, `the WAL file is ${cut} bytes`);
    } finally {
      db.close();
    }
  });

  it("accepts the original's file: DSN form", async () => {
    const path = tmp.file("dsn.db");
    const broker = await openBroker(`file:${path}`, quiet);
    await broker.createQueue("q");
    await broker.close();
    const again = await openBroker(path, quiet);
    assert.equal((await again.listQueues()).length, 1);
    await again.close();
  });

  it("reopens an existing database and keeps its data", async () => {
    const path = tmp.file("reopen.db");
    const a = await openBroker(path, quiet);
    await a.createQueue("q");
    const [seq] = await a.send("q", { body: "kept" });
    await a.close();
    const b = await openBroker(path, quiet);
    const [m] = await b.peek("q");
    assert.equal(m?.seqNumber, seq);
    assert.equal(m?.body.toString(), "kept");
    // Sequence numbers are never reused, even after the highest is deleted.
    const [r] = await b.receive("q");
    await b.complete("q", r!.seqNumber, r!.lockToken!);
    const [next] = await b.send("q", { body: "next" });
    assert.ok(next! > seq!);
    await b.close();
  });

  it("refuses a database written by a newer schema with schema_version_mismatch and leaves it untouched", async () => {
    const path = tmp.file("newer.db");
    const a = await openBroker(path, quiet);
    await a.close();
    const db = new Database(path);
    db.prepare("INSERT INTO schema_version (version, name, applied_at) VALUES (?, 'future', 0)").run(
      LATEST_SCHEMA_VERSION + 1,
    );
    const before = db.prepare("SELECT count(*) AS n FROM sqlite_master").get();
    db.close();
    await assert.rejects(openBroker(path, quiet), (err: unknown) => {
      assert.ok(err instanceof SchemaVersionMismatchError);
      assert.equal(err.code, "schema_version_mismatch");
      return true;
    });
    const check = new Database(path, { readonly: true });
    assert.deepEqual(check.prepare("SELECT count(*) AS n FROM sqlite_master").get(), before);
    assert.equal(
      (check.prepare("SELECT max(version) AS v FROM schema_version").get() as { v: number }).v,
      LATEST_SCHEMA_VERSION + 1,
    );
    check.close();
  });

  it("refuses another application's SQLite file without changing it", async () => {
    const path = tmp.file("foreign.db");
    const db = new Database(path);
    db.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)");
    db.close();
    const bytes = readFileSync(path);
    await assert.rejects(openBroker(path, quiet), NotMqliteDatabaseError);
    // Byte for byte: it is not even switched to WAL (which rewrote its header).
    assert.deepEqual(readFileSync(path), bytes);
    const check = new Database(path, { readonly: true });
    const tables = check.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all();
    assert.deepEqual(tables, [{ name: "customers" }]);
    check.close();
  });

  it("refuses a file that is not a database at all", async () => {
    const path = tmp.file("garbage.db");
    writeFileSync(
      path,
      "this is not a database, just some text that is long enough to have a header...".repeat(20),
    );
    await assert.rejects(openBroker(path, quiet), NotMqliteDatabaseError);
  });

  it("exclusive: a second opener fails fast with db_locked; the lock goes with close", async () => {
    const path = tmp.file("exclusive.db");
    const a = await openBroker(path, { ...quiet, exclusive: true });
    await a.createQueue("q");
    const started = Date.now();
    await assert.rejects(openBroker(path, { ...quiet, exclusive: true }), DbLockedError);
    await assert.rejects(openBroker(path, { ...quiet, busyTimeoutMs: 100 }), DbLockedError);
    assert.ok(Date.now() - started < 3000, "fails fast");
    await a.close();
    const b = await openBroker(path, { ...quiet, exclusive: true });
    assert.equal((await b.listQueues())[0]?.name, "q");
    await b.close();
  });

  it("several non-exclusive openers share one file", async () => {
    const path = tmp.file("shared.db");
    const a = await openBroker(path, quiet);
    const b = await openBroker(path, quiet);
    await a.createQueue("q");
    await b.send("q", { body: "from b" });
    const [m] = await a.receive("q");
    assert.equal(m?.body.toString(), "from b");
    await a.close();
    await b.close();
  });

  it("synchronous accepts normal, full, off, extra (any case) and refuses anything else", () => {
    assert.equal(parseSyncMode(undefined), "normal");
    assert.equal(parseSyncMode("FULL"), "full");
    assert.equal(parseSyncMode("off"), "off");
    assert.equal(parseSyncMode("Extra"), "extra");
    assert.throws(() => parseSyncMode("fast"), InvalidArgumentError);
  });
});
