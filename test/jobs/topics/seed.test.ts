import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { tempDir } from "../../support/temp.js";

// Seed 004's TypeScript snippets, run as written (only the import path changed: "mqlite", through the
// package's `source` condition, as examples/ are), each in a fresh directory, each followed by
// checks of what its comments say. They stay on SQLite: the snippets open `new Queue({ dbPath })`
// as written.
const dir = resolve("test/jobs/topics/seed");

describe("seed 004 snippets run as written", () => {
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".ts"))
    .sort()) {
    it(file, () => {
      const tmp = tempDir("mqlite-seed-");
      try {
        // The snippet runs in a fresh directory: the loader is named by its full location.
        const flags = [
          ...process.execArgv
            .filter((a) => !a.startsWith("--test"))
            .map((a) => (a === "tsx" ? import.meta.resolve("tsx") : a)),
          "--conditions=source",
        ];
        const r = spawnSync(process.execPath, [...flags, join(dir, file)], {
          cwd: tmp.dir,
          encoding: "utf8",
          timeout: 60_000,
        });
        assert.equal(r.status, 0, `${file} failed:\n${r.stdout}\n${r.stderr}`);
      } finally {
        tmp.cleanup();
      }
    });
  }
});
