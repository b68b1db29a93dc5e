import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { LATEST_SCHEMA_VERSION } from "../../src/store/sqlite/migrations/index.js";
import { writeV5File } from "../support/mqlite-v5-file.js";
import { tempDir } from "../support/temp.js";
import { compiledCli } from "./compiled.js";
import { cleanEnv, cli } from "./harness.js";

describe("cli: migrate-from-mqlite", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("upgrades a MQLite file in place, keeps a copy, reports what it copied; a second run has nothing to do", async () => {
    const path = tmp.file("mq.db");
    writeV5File(path);
    const r = await cli(["migrate-from-mqlite", path, "--output", "json"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "", "no progress report when stderr is not a terminal and --progress is absent");
    assert.deepEqual(JSON.parse(r.stdout), {
      location: path,
      migrated: true,
      backup: `${path}.v5.bak`,
      queues: 4,
      subscriptions: 2,
      messages: 8,
      dedup_entries: 1,
      receipts: 1,
      receive_attempts: 0, // the fixture's attempt lived five minutes after its (fixed) write time
    });
    assert.ok(existsSync(`${path}.v5.bak`));
    const db = new Database(path, { readonly: true });
    assert.equal(db.prepare("SELECT max(version) FROM schema_version").pluck().get(), LATEST_SCHEMA_VERSION);
    assert.equal(db.prepare("SELECT count(*) FROM messages").pluck().get(), 8);
    db.close();

    const again = await cli(["migrate-from-mqlite", path]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(
      again.stdout,
      `${path} is already an mqlite database (schema ${LATEST_SCHEMA_VERSION}): nothing to migrate\n`,
    );
  });

  it("--progress reports the copy on stderr, chunk by chunk, when stderr is not a terminal", async () => {
    const path = tmp.file("large.db");
    writeV5File(path, 25_000);
    const r = await cli(["migrate-from-mqlite", `file:${path}`, "--progress"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, [0, 10_000, 20_000, 25_008].map((n) => `copying messages ${n}/25008\n`).join(""));
    assert.match(
      r.stdout,
      new RegExp(
        `^migrated ${path.replaceAll(".", "\\.")} from MQLite: 4 queues, 2 subscriptions, 25008 messages, 1 dedup entries, 1 receipts \\(copy kept at .*\\.v5\\.bak\\)\\n$`,
      ),
    );
  });

  it("on a terminal, a large copy draws a progress bar on stderr by itself", async () => {
    const path = tmp.file("tty.db");
    writeV5File(path, 25_000);
    // `script` runs the command on a pseudo-terminal and copies what it wrote.
    const child = spawn(
      "script",
      ["-qefc", `"${process.execPath}" "${compiledCli()}" migrate-from-mqlite "${path}"`, "/dev/null"],
      {
        env: cleanEnv(),
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    assert.equal(code, 0, out);
    assert.match(out, /\rcopying messages \[#+\.*\] \d+% \d+\/25008/);
    assert.match(out, /copying messages \[#{24}\] 100% 25008\/25008/);
    assert.match(out, /migrated .* 25008 messages/);
  });

  it("refuses a missing file (not_found) and another application's file (not_mqlite_database), changing nothing", async () => {
    const missing = await cli(["migrate-from-mqlite", tmp.file("nope.db")]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /not_found/);
    assert.equal(existsSync(tmp.file("nope.db")), false);
    const other = tmp.file("other.db");
    const db = new Database(other);
    db.exec("CREATE TABLE t (x)");
    db.close();
    const r = await cli(["migrate-from-mqlite", other]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /not_mqlite_database/);
    const after = new Database(other, { readonly: true });
    assert.deepEqual(after.prepare("SELECT name FROM sqlite_master").pluck().all(), ["t"]);
    after.close();
  });
});
