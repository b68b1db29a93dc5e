import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, it } from "node:test";
import { docSection } from "./support/doc-snippet.js";

// The sandboxed handlers section of docs/jobs.md: its ```js block is the handler file named on its
// first line, its ```ts block the program, which must run as written and print what its comments
// say. Both are written to a fresh folder inside the repository, so that `import … from "mqlite"`
// resolves to this package (through its `source` condition), and run from there.
const HEADING = "## Sandboxed handlers";
const section = docSection(readFileSync("docs/jobs.md", "utf8"), HEADING);
const files = [...section.matchAll(/```js\n\/\/ (\S+)\n([\s\S]*?)```/g)].map((m) => ({
  path: m[1]!,
  code: `// ${m[1]}\n${m[2]}`,
}));
const programs = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);

const EXPECTED = [
  /\{ width: 640, height: 480, pixels: 307200 \}/,
  /\{ logs: \[ 'resizing to 640x480' \], count: 1 \}/,
  /^survived on attempt 2$/m,
  /^the sandbox process exited with code 1 during the job$/m,
  /^JobFailedError$/m,
  /^JobTimeoutError$/m,
];

describe("docs/jobs.md sandboxed handlers example runs as written", () => {
  it("has a handler file and a program", () => {
    assert.equal(files.length, 1);
    assert.equal(programs.length, 1);
  });

  it("runs", () => {
    const dir = mkdtempSync(resolve("test", ".doc-sandbox-"));
    try {
      for (const f of files) {
        mkdirSync(dirname(join(dir, f.path)), { recursive: true });
        writeFileSync(join(dir, f.path), f.code);
      }
      writeFileSync(join(dir, "main.ts"), programs[0]!);
      const flags = [
        ...process.execArgv
          .filter((a) => !a.startsWith("--test"))
          .map((a) => (a === "tsx" ? import.meta.resolve("tsx") : a)),
        "--conditions=source",
      ];
      const r = spawnSync(process.execPath, [...flags, "main.ts"], {
        cwd: dir,
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.equal(r.status, 0, `the example failed:\n${r.stdout}\n${r.stderr}`);
      for (const re of EXPECTED) assert.match(r.stdout, re, `the example prints ${re}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
