#!/usr/bin/env node
// The `mqlite-mcp` executable, the original's name for the MCP server: `mqlite mcp`, configured by
// the environment only (MQLITE_ENDPOINT, MQLITE_TOKEN); its arguments are ignored, as there.
import { runCli } from "./program.js";

await runCli(process.argv.slice(0, 2).concat("mcp"));
