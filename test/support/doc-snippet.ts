import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
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
