import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, it } from "node:test";
import { tempDir } from "./support/temp.js";

// The ```ts blocks of the backoff, interval periodic, retention and promote/remove/retry sections
// of docs/jobs.md are whole programs that must run as written (each in a fresh directory, through
// the package's `source` condition), and print what their comments say.
const SECTIONS = [
  "## Fixed and custom backoff",
  "## Keeping completed and dead jobs",
  "## Promote, remove and retry a job",
  "## Periodic jobs every N ms",
];
const doc = readFileSync("docs/jobs.md", "utf8");
const blocks = SECTIONS.flatMap((heading) => {
  const start = doc.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `docs/jobs.md has a section "${heading}"`);
  const end = doc.indexOf("\n## ", start + heading.length + 2);
  const section = doc.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => ({ heading, code: m[1]! }));
});

/** What each block must print, in order (the blocks above, in order). */
const EXPECTED: string[][] = [
  ["ok", "2", "true", "true"],
  ["5", "true", "1"],
  ["sent to ops", "true", "synced", "null", "true job_state complete"],
  ["0", "200", "true"],
];

describe("docs/jobs.md backoff, interval periodic, retention and job actions examples run as written", () => {
  it("has the examples", () => assert.equal(blocks.length, EXPECTED.length));
  blocks.forEach(({ heading, code }, i) => {
    it(`${heading} example`, () => {
      const tmp = tempDir("mqlite-doc-");
      const file = resolve("test", `.doc-jobs-sched-example-${process.pid}-${i}.ts`);
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
        assert.equal(r.status, 0, `${heading} failed:\n${code}\n${r.stdout}\n${r.stderr}`);
        assert.deepEqual(r.stdout.trim().split("\n"), EXPECTED[i], `${heading} prints what it says`);
      } finally {
        tmp.cleanup();
        rmSync(file, { force: true });
      }
    });
  });
});
