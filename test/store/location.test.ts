import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import { after, describe, it } from "node:test";
import { InvalidArgumentError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";
import { compiledCli } from "../cli/compiled.js";
import { cleanEnv } from "../cli/harness.js";
import { tempDir } from "../support/temp.js";

const quiet = { background: false, logger: silentLogger } as const;

/** Runs `fn` with `dir` as the working directory, where a relative path would be created. */
async function inDir<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const before = process.cwd();
  process.chdir(dir);
  try {
    return await fn();
  } finally {
    process.chdir(before);
  }
}

describe("store: locations of other schemes are refused, creating nothing", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  for (const [location, scheme] of [
    ["libsql://mydb.turso.io", "libsql"],
    ["LIBSQL://mydb.turso.io?authToken=x", "libsql"],
    ["wss://mydb.turso.io", "wss"],
    ["https://example.com/mq.db", "https"],
    ["mysql://root@localhost/mq", "mysql"],
  ] as const) {
    it(`${location}: invalid_argument naming "${scheme}", and the directory stays empty`, async () => {
      const dir = tmp.file(`case-${scheme}-${location.length}`);
      mkdirSync(dir);
      const expected = `unsupported location scheme "${scheme}"; supported: file paths, :memory:, postgres://`;
      await inDir(dir, async () => {
        await assert.rejects(openBroker(location, quiet), (err: unknown) => {
          assert.ok(err instanceof InvalidArgumentError);
          assert.equal(err.code, "invalid_argument");
          assert.equal(err.message, expected);
          return true;
        });
        assert.throws(() => new SqliteBroker(location, quiet), InvalidArgumentError);
      });
      assert.deepEqual(readdirSync(dir), []);
    });
  }

  it("plain paths, file: paths and :memory: still open", async () => {
    await inDir(tmp.dir, async () => {
      for (const location of ["plain.db", "file:prefixed.db", ":memory:"]) {
        const broker = await openBroker(location, quiet);
        await broker.createQueue("q");
        await broker.close();
      }
    });
    const files = readdirSync(tmp.dir);
    assert.ok(files.includes("plain.db") && files.includes("prefixed.db"), files.join(", "));
  });

  it("MQLITE_DB=libsql://… makes the CLI fail with the error and create nothing in its directory", async () => {
    const dir = tmp.file("cli");
    mkdirSync(dir);
    const child = spawn(process.execPath, [compiledCli(), "status"], {
      cwd: dir,
      env: { ...cleanEnv(), MQLITE_DB: "libsql://mydb.turso.io" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    assert.notEqual(code, 0);
    assert.match(
      stderr,
      /invalid_argument: unsupported location scheme "libsql"; supported: file paths, :memory:, postgres:\/\//,
    );
    assert.deepEqual(readdirSync(dir), []);
  });
});
