// A Queue refuses bad options before it opens anything, and the job face without its package
// entry (which provides the host that opens brokers by location) says what is missing. Each runs
// in a fresh process, so no other test has opened a broker or provided the host first.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { tempDir } from "../support/temp.js";

const run = (script: string) =>
  spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    encoding: "utf8",
    timeout: 60_000,
  });
const source = (path: string) => JSON.stringify(pathToFileURL(path).href);

describe("Queue options", () => {
  it("a refused option throws QueueError before a broker is opened: no file, and the process exits", () => {
    const tmp = tempDir("mqlite-queue-options-");
    try {
      const bad = [
        { resultTtlMs: -1 },
        { keepCompleted: { count: -1 } },
        { keepDead: { ageMs: -5 } },
        { leaseMs: 5 },
      ];
      const r = run(`
        import { Queue, QueueError } from ${source("src/jobs/index.ts")};
        for (const [i, options] of ${JSON.stringify(bad)}.entries()) {
          try {
            new Queue({ dbPath: ${JSON.stringify(tmp.dir)} + "/q" + i + ".db", ...options });
            console.log("accepted", JSON.stringify(options));
          } catch (err) {
            console.log(err instanceof QueueError ? "refused" : "other: " + err);
          }
        }
        await new Promise((r) => setTimeout(r, 200));
      `);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(r.stdout.trim().split("\n"), ["refused", "refused", "refused", "refused"]);
      for (let i = 0; i < bad.length; i++)
        assert.equal(
          existsSync(tmp.file(`q${i}.db`)),
          false,
          `no database file for ${JSON.stringify(bad[i])}`,
        );
    } finally {
      tmp.cleanup();
    }
  });

  it("without the package entry, a Queue by location says how to get one", () => {
    const r = run(`
      import { Queue } from ${source("src/jobs/queue.ts")};
      import { QueueError } from ${source("src/jobs/errors.ts")};
      try {
        new Queue({ dbPath: ":memory:" });
        console.log("opened");
      } catch (err) {
        console.log(err instanceof QueueError, err.message);
      }
    `);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(
      r.stdout.trim(),
      "true no broker by location here: pass { broker }, or import the job face from the package entry",
    );
  });
});
