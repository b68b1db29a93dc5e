import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { cleanEnv, root } from "./harness.js";

describe("the bin from a checkout", () => {
  it("package.json's bin runs the TypeScript sources through tsx (no build needed)", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    const bin = join(root, pkg.bin.mqlite);
    const r = spawnSync(process.execPath, [bin, "--help"], { cwd: "/", env: cleanEnv(), encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^Usage: mqlite \[options\] \[command\]/);
    for (const command of ["serve", "mcp", "send", "receive", "purge-dlq", "vacuum", "version", "help"])
      assert.match(r.stdout, new RegExp(`^  ${command}\\b`, "m"), command);
  });
});
