import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

// Every file under examples/ is documentation that must run as written.
describe("examples run as written", () => {
  for (const file of readdirSync("examples").filter((f) => f.endsWith(".ts"))) {
    it(file, () => {
      const flags = [...process.execArgv.filter((a) => !a.startsWith("--test")), "--conditions=source"];
      const r = spawnSync(process.execPath, [...flags, join("examples", file)], {
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.equal(r.status, 0, `${file} failed:\n${r.stdout}\n${r.stderr}`);
    });
  }
});
