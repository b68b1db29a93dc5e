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

  it("mqlite-mcp is the MCP server over stdio (the original's command name); its arguments are ignored", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    const bin = join(root, pkg.bin["mqlite-mcp"]);
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    const r = spawnSync(process.execPath, [bin, "--ignored"], {
      cwd: "/",
      env: { ...cleanEnv(), MQLITE_DB: ":memory:" },
      input: `${JSON.stringify(initialize)}\n`,
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const reply = JSON.parse(r.stdout.split("\n")[0]!);
    assert.equal(reply.id, 1);
    assert.equal(reply.result.protocolVersion, "2024-11-05");
    assert.ok(reply.result.capabilities.tools);
  });
});
