import assert from "node:assert/strict";
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { tempDir } from "./temp.js";

/**
 * Runs a docs snippet as a program, as written: saved under test/ (so the package resolves through
 * its `source` condition), run with this process's tsx in a fresh empty directory, both removed after.
 */
export function runDocSnippet(code: string, name: string): SpawnSyncReturns<string> {
  const tmp = tempDir("mqlite-doc-");
  const file = resolve("test", `.doc-${name}-${process.pid}.ts`);
  try {
    writeFileSync(file, code);
    const flags = [
      ...process.execArgv
        .filter((a) => !a.startsWith("--test"))
        .map((a) => (a === "tsx" ? import.meta.resolve("tsx") : a)),
      "--conditions=source",
    ];
    return spawnSync(process.execPath, [...flags, file], { cwd: tmp.dir, encoding: "utf8", timeout: 60_000 });
  } finally {
    tmp.cleanup();
    rmSync(file, { force: true });
  }
}

/** The text of the section of markdown `doc` under `heading` (a `## ` line), up to the next one. */
export function docSection(doc: string, heading: string): string {
  const start = doc.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `the document has a section "${heading}"`);
  const end = doc.indexOf("\n## ", start + heading.length + 2);
  return doc.slice(start, end < 0 ? undefined : end);
}

/** The ```ts blocks of the sections of the markdown file `path` under `headings`, in order. */
export function sectionBlocks(
  path: string,
  headings: readonly string[],
): { heading: string; code: string }[] {
  const doc = readFileSync(path, "utf8");
  return headings.flatMap((heading) =>
    [...docSection(doc, heading).matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => ({ heading, code: m[1]! })),
  );
}
