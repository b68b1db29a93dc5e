// Faults under a served broker: the disk filling up, another process holding the write lock, and
// files that are not (or no longer) mqlite databases.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { DbLockedError, NotMqliteDatabaseError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { openBroker } from "../../src/open.js";
import { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";
import { b64, type Served, serve } from "../server/harness.js";
import { collectLines, spawnChild } from "../support/child.js";
import { startServedChild } from "../support/served-child.js";
import { tempDir } from "../support/temp.js";

/** A size-limited tmpfs at `dir`, or false where this process may not mount. */
function mountTmpfs(dir: string, size: string): boolean {
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}

function unmount(dir: string): void {
  try {
    execFileSync("umount", [dir], { stdio: "pipe" });
  } catch {
    execFileSync("umount", ["-l", dir], { stdio: "pipe" });
  }
}

/** Fills the file system holding `path` until a write fails (ENOSPC). */
function fill(path: string): void {
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(16 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    assert.equal((err as NodeJS.ErrnoException).code, "ENOSPC");
  } finally {
    closeSync(fd);
  }
}

describe("reliability: the disk fills up", () => {
  it("sends answer 507 storage_full, nothing acknowledged is lost, and the broker works again once space is freed", async (t) => {
    const tmp = tempDir("mqlite-full-");
    const mnt = tmp.file("mnt");
    mkdirSync(mnt);
    const mounted = mountTmpfs(mnt, "3m");
    // A platform that cannot mount gets the same fault injected: a page limit makes SQLite answer
    // SQLITE_FULL exactly as a full disk does.
    t.diagnostic(mounted ? "disk full: a 3 MiB tmpfs" : "disk full: injected SQLITE_FULL (max_page_count)");
    console.log(mounted ? "disk full: a 3 MiB tmpfs" : "disk full: injected SQLITE_FULL (max_page_count)");
    const path = `${mnt}/mq.db`;
    let s: Served | undefined;
    try {
      s = await serve({}, { path, synchronous: "full" });
      const db = (s.broker as unknown as { db: Database.Database }).db;
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      const acked = new Map<string, number>();
      let n = 0;
      const send = async () => {
        const id = `m${++n}`;
        const a = await s!.rpc("QueueService/Send", {
          queue: "q",
          messages: [{ message_id: id, body: b64(`${id}:${"x".repeat(8000)}`) }],
        });
        if (a.status === 200) acked.set(id, a.json.seq_numbers[0]);
        return a;
      };
      for (let i = 0; i < 20; i++) assert.equal((await send()).status, 200);

      const filler = `${mnt}/filler`;
      if (mounted) fill(filler);
      else db.pragma(`max_page_count = ${(db.pragma("page_count", { simple: true }) as number) + 8}`);

      // Keep sending until the disk is full: every answer is a success or a 507.
      let full: { status: number; json: any } | undefined;
      for (let i = 0; i < 2000 && !full; i++) {
        const a = await send();
        if (a.status !== 200) full = a;
      }
      assert.ok(full, "the disk never filled");
      assert.equal(full.status, 507, JSON.stringify(full.json));
      assert.equal(full.json.code, "storage_full");
      // Batches too, and settlements: a success or a 507, never anything else.
      const batch = await s.rpc("QueueService/Send", {
        queue: "q",
        messages: Array.from({ length: 8 }, (_, k) => ({ message_id: `b${k}`, body: b64("y".repeat(8000)) })),
      });
      assert.ok([200, 507].includes(batch.status), batch.text);
      if (batch.status === 200)
        batch.json.seq_numbers.forEach((seq: number, k: number) => {
          acked.set(`b${k}`, seq);
        });
      const got = await s.rpc("QueueService/Receive", { queue: "q", max_messages: 4 });
      assert.ok([200, 507].includes(got.status), got.text);
      const completed = new Set<string>();
      for (const m of got.status === 200 ? got.json.messages : []) {
        const c = await s.rpc("QueueService/Complete", {
          queue: "q",
          seq_number: m.seq_number,
          lock_token: m.lock_token,
        });
        assert.ok([200, 507].includes(c.status), c.text);
        if (c.status === 200) completed.add(m.message_id);
      }
      assert.equal((await s.rpc("QueueService/Stats", { queue: "q" })).status, 200, "reads still work");

      // Space comes back: so does the broker.
      if (mounted) rmSync(filler);
      else db.pragma("max_page_count = 4294967294");
      for (let i = 0; i < 5; i++) assert.equal((await send()).status, 200, "a send after space was freed");

      // Nothing acknowledged was lost; nothing refused was stored.
      const stored = new Map<string, number>();
      for (;;) {
        const round: { status: number; text: string; json: any } = await s.rpc("QueueService/Receive", {
          queue: "q",
          max_messages: 256,
        });
        assert.equal(round.status, 200, round.text);
        if (round.json.messages.length === 0) break;
        for (const m of round.json.messages) stored.set(m.message_id, (stored.get(m.message_id) ?? 0) + 1);
      }
      for (const [id] of acked) {
        if (completed.has(id)) assert.ok(!stored.has(id), `completed ${id} came back`);
        else assert.equal(stored.get(id), 1, `acknowledged ${id} is stored ${stored.get(id) ?? 0} times`);
      }
      for (const [id] of stored) assert.ok(acked.has(id), `${id} was refused but stored`);
      await s.close();
      s = undefined;
      const raw = new Database(path, { readonly: true });
      assert.equal(raw.pragma("integrity_check", { simple: true }), "ok");
      raw.close();
    } finally {
      await s?.close().catch(() => {});
      if (mounted) unmount(mnt);
      tmp.cleanup();
    }
  });
});

describe("reliability: another process holds the write lock", () => {
  const tmp = tempDir("mqlite-busy-");
  after(() => tmp.cleanup());

  const holdLock = async (path: string, ms: number) => {
    const child = spawnChild("lock-holder-child.ts", [path, String(ms)]);
    let locked: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const done = collectLines(child, (line) => {
      if (line === "LOCKED") locked();
    });
    await ready;
    return { released: done };
  };

  it("a write waits for the lock within the busy timeout and succeeds", async () => {
    const path = tmp.file("busy-ok.db");
    const broker: SqliteBroker = new SqliteBroker(path, {
      busyTimeoutMs: 5000,
      background: false,
      logger: silentLogger,
    });
    try {
      await broker.createQueue("q");
      const { released } = await holdLock(path, 600);
      const started = performance.now();
      const [seq] = await broker.send("q", { body: "after the lock" });
      assert.ok(seq! > 0);
      assert.ok(performance.now() - started > 300, "it waited for the other process");
      assert.equal((await released).code, 0);
    } finally {
      await broker.close();
    }
  });

  it("past the busy timeout it is db_locked (500 over HTTP), nothing is half-written, and the broker recovers", async () => {
    const path = tmp.file("busy-locked.db");
    const s = await serve({}, { path, busyTimeoutMs: 300 });
    try {
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      await assert.rejects(
        (async () => {
          const { released } = await holdLock(path, 2500);
          try {
            await s.broker.send("q", { body: "embedded" });
          } finally {
            const answer = await s.rpc("QueueService/Send", {
              queue: "q",
              messages: [{ body: b64("http") }],
            });
            assert.equal(answer.status, 500, answer.text);
            assert.equal(answer.json.code, "db_locked");
            await released;
          }
        })(),
        DbLockedError,
      );
      const after = await s.rpc("QueueService/Send", { queue: "q", messages: [{ body: b64("later") }] });
      assert.equal(after.status, 200, after.text);
      const stats = await s.rpc("QueueService/Stats", { queue: "q" });
      assert.equal(stats.json.total, 1, "only the send after the lock was stored");
    } finally {
      await s.close();
    }
  });
});

describe("reliability: files that are not mqlite databases", () => {
  const tmp = tempDir("mqlite-badfile-");
  after(() => tmp.cleanup());

  it("mqlite serve refuses a foreign SQLite file, a non-database and a corrupted mqlite file, with a clear error, leaving them as they were", async () => {
    const foreign = tmp.file("foreign.db");
    const f = new Database(foreign);
    f.exec(
      "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers VALUES (1, 'a')",
    );
    f.close();
    const garbage = tmp.file("garbage.db");
    writeFileSync(garbage, "not a database, just text long enough to have a header. ".repeat(100));
    const corrupt = tmp.file("corrupt.db");
    const b = await openBroker(corrupt, { background: false, logger: silentLogger });
    await b.createQueue("q");
    await b.send(
      "q",
      Array.from({ length: 200 }, (_, i) => ({ body: `m${i}`.repeat(100) })),
    );
    await b.close();
    // Overwrite the header's magic string and the first page's b-tree header.
    const bytes = readFileSync(corrupt);
    bytes.fill(0x5a, 0, 120);
    writeFileSync(corrupt, bytes);

    for (const [file, code] of [
      [foreign, "not_mqlite_database"],
      [garbage, "not_mqlite_database"],
      [corrupt, "not_mqlite_database"],
    ] as const) {
      const before = readFileSync(file);
      await assert.rejects(startServedChild({ db: file, startTimeoutMs: 30_000 }), (err: Error) => {
        assert.match(err.message, /exited \(1\)/, err.message);
        assert.match(err.message, new RegExp(code), err.message);
        return true;
      });
      assert.deepEqual(readFileSync(file), before, `${file} was changed`);
    }
    await assert.rejects(openBroker(corrupt, { logger: silentLogger }), NotMqliteDatabaseError);
  });

  it("a mqlite file corrupted across its data pages is refused at open with not_mqlite_database", async () => {
    const path = tmp.file("data-corrupt.db");
    const b = await openBroker(path, { background: false, logger: silentLogger });
    await b.createQueue("q");
    await b.send(
      "q",
      Array.from({ length: 300 }, (_, i) => ({ body: `m${i}`.repeat(200) })),
    );
    await b.close();
    const bytes = readFileSync(path);
    const pageSize = bytes.readUInt16BE(16) === 1 ? 65536 : bytes.readUInt16BE(16);
    // Scribble over every page past the schema's first few (the messages' b-tree).
    for (let off = pageSize * 6; off < bytes.length; off += pageSize) bytes.fill(0xa5, off, off + 64);
    writeFileSync(path, bytes);
    await assert.rejects(
      openBroker(path, { background: false, logger: silentLogger }),
      NotMqliteDatabaseError,
    );
  });

  it("a mqlite file whose message bodies are corrupt opens, and answers not_mqlite_database where they are read, never a crash", async () => {
    const path = tmp.file("body-corrupt.db");
    // The served broker below runs on a manual clock: the messages are sent on one too, so that
    // they are due there.
    const b = await openBroker(path, { background: false, logger: silentLogger, clock: new ManualClock() });
    await b.createQueue("q");
    // Bodies larger than a page live in overflow pages, which only a read of the body touches.
    await b.send(
      "q",
      Array.from({ length: 50 }, (_, i) => ({ body: `m${i}`.repeat(5000) })),
    );
    await b.close();
    const raw = new Database(path, { readonly: true });
    const overflow = raw
      .prepare("SELECT pageno FROM dbstat WHERE pagetype = 'overflow'")
      .pluck()
      .all() as number[];
    const pageSize = raw.pragma("page_size", { simple: true }) as number;
    raw.close();
    assert.ok(overflow.length > 0, "the bodies are stored in overflow pages");
    const bytes = readFileSync(path);
    for (const page of overflow) bytes.fill(0xa5, (page - 1) * pageSize, (page - 1) * pageSize + 64);
    writeFileSync(path, bytes);

    const s = await serve({}, { path });
    try {
      for (const [rpc, body] of [
        ["QueueService/Peek", { queue: "q", max: 1000 }],
        ["QueueService/Receive", { queue: "q", max_messages: 256 }],
      ] as const) {
        const a = await s.rpc(rpc, body);
        assert.equal(a.json.code, "not_mqlite_database", `${rpc}: ${a.status} ${a.text}`);
      }
      const stats = await s.rpc("QueueService/Stats", { queue: "q" });
      assert.equal(stats.status, 200, "counts need no body");
      assert.equal(stats.json.active, 50);
      assert.equal((await fetch(`${s.url}/healthz`)).status, 200, "still serving");
    } finally {
      await s.close();
    }
  });
});
