import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, it } from "node:test";
import { tempDir } from "./support/temp.js";

// Every ```ts block of docs/job-topics.md that imports "mqlite" is a whole program that must run as
// written: each is run in a fresh directory (through the package's `source` condition).
const doc = readFileSync("docs/job-topics.md", "utf8");
const blocks = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)]
  .map((m) => m[1]!)
  .filter((code) => code.includes('from "mqlite"'));

describe("docs/job-topics.md examples run as written", () => {
  it("has runnable examples", () => assert.ok(blocks.length >= 8));
  blocks.forEach((code, i) => {
    const first = code.split("\n").find((l) => l.startsWith("await queue.") || l.startsWith("queue.")) ?? "";
    it(`example ${i + 1}: ${first.slice(0, 60)}`, () => {
      const tmp = tempDir("mqlite-doc-");
      // Inside the repository, so that "mqlite" resolves to this package.
      const file = resolve("test", `.doc-example-${process.pid}-${i}.ts`);
      try {
        writeFileSync(file, code);
        const flags = [
          ...process.execArgv
            .filter((a) => !a.startsWith("--test"))
            .map((a) => (a === "tsx" ? import.meta.resolve("tsx") : a)),
          "--conditions=source",
        ];
        const r = spawnSync(process.execPath, [...flags, file], {
          cwd: tmp.dir,
          encoding: "utf8",
          timeout: 60_000,
        });
        assert.equal(r.status, 0, `example ${i + 1} failed:\n${code}\n${r.stdout}\n${r.stderr}`);
      } finally {
        tmp.cleanup();
        rmSync(file, { force: true });
      }
    });
  });
});
