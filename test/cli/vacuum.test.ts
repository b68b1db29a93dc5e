import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { after, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { tempDir } from "../support/temp.js";
import { cli } from "./harness.js";

describe("mqlite vacuum (local only, broker stopped)", () => {
  const tmp = tempDir("mqlite-cli-vacuum-");
  const file = tmp.file("mq.db");
  after(() => tmp.cleanup());

  it("gives freed pages back; refuses while a broker holds the file, and what is not a local file", async () => {
    const broker = await openBroker(file, { logger: silentLogger, background: false });
    await broker.createQueue("q");
    const body = Buffer.alloc(64 * 1024, 120);
    await broker.send(
      "q",
      Array.from({ length: 64 }, () => ({ body })),
    );
    await broker.deleteQueue("q");

    const [held, memory, missing, noDb] = await Promise.all([
      cli(["vacuum", "--db", file]),
      cli(["vacuum", "--db", ":memory:"]),
      cli(["vacuum"], { env: { MQLITE_DB: tmp.file("absent.db") } }),
      cli(["vacuum"], { env: { MQLITE_ENDPOINT: "http://127.0.0.1:6754" } }),
    ]);
    assert.equal(held.code, 1);
    assert.match(
      held.stderr,
      /^error: db_locked: .*locked by another process: stop the broker before vacuum/,
    );
    assert.equal(memory.code, 1);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: not_found: no database at /);
    assert.equal(noDb.code, 1, "an ambient endpoint does not make vacuum remote");
    assert.match(
      noDb.stderr,
      /vacuum is a local maintenance command: drop --endpoint\/MQLITE_ENDPOINT and point MQLITE_DB at the file/,
    );
    await broker.close();

    const before = statSync(file).size;
    const text = await cli(["vacuum"], { env: { MQLITE_DB: `file:${file}` } });
    assert.equal(text.code, 0, text.stderr);
    const after = statSync(file).size;
    assert.ok(after < before, `${after} < ${before}`);
    const mib = (n: number) => (n / 2 ** 20).toFixed(2);
    // The original's line, sizes of the main file in MiB with two decimals.
    assert.equal(
      text.stdout,
      `ok: incremental_vacuum — ${mib(before)} MiB -> ${mib(after)} MiB (freed ${mib(before - after)} MiB)\n`,
    );
    // One after the other: each takes the file exclusively.
    const full = await cli(["vacuum", "--full", "--db", file, "--output", "json"]);
    const human = await cli(["vacuum", "--db", file, "-output", "wire"]);
    assert.equal(full.code, 0, full.stderr);
    const report = JSON.parse(full.stdout);
    assert.deepEqual(Object.keys(report), [
      "action",
      "after_bytes",
      "before_bytes",
      "freed_bytes",
      "grew_bytes",
    ]);
    assert.equal(report.freed_bytes, Math.max(report.before_bytes - report.after_bytes, 0));
    assert.equal(human.code, 0, human.stderr);
    assert.ok(JSON.parse(human.stdout).bytes_after > 0);
    const reopened = await openBroker(file, { logger: silentLogger, background: false });
    assert.deepEqual(await reopened.listQueues(), [], "the database is intact");
    await reopened.close();
  });
});
