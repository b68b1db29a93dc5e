#!/usr/bin/env node
// The `mqlite-mcp` executable (the MCP server over stdio, as `mqlite mcp`). In a checkout it runs
// the TypeScript sources through tsx; in the published package the built CLI.
import { existsSync } from "node:fs";

const source = new URL("../src/cli/mcp-main.ts", import.meta.url);
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  await import(source.href);
} else {
  await import(new URL("../dist/cli/mcp-main.js", import.meta.url).href);
}
