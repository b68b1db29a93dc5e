import type { Command } from "commander";
import { openTarget } from "../connect/open.js";
import { type ConnectionFlags, resolveTarget } from "../connect/target.js";

/** The original MCP server's default broker. */
const DEFAULT_ENDPOINT = "http://127.0.0.1:6754";

/** `mqlite mcp`: the MCP server over stdio, for an agent to start as a subprocess. */
export function registerMcp(program: Command): void {
  program
    .command("mcp")
    .description("serve the broker's tools to an AI agent over MCP (stdio)")
    .option("--endpoint <url>", "served broker (env MQLITE_ENDPOINT; default http://127.0.0.1:6754)")
    .option("--token <token>", "bearer token (env MQLITE_TOKEN)")
    .option("--db <path>", "open this database file in the MCP process instead (env MQLITE_DB)")
    .addHelpText(
      "after",
      `
An agent starts it as a subprocess and speaks JSON-RPC on stdin/stdout. Configuration, e.g.:
  {"mcpServers": {"mqlite": {"command": "npx", "args": ["mqlite", "mcp"],
    "env": {"MQLITE_ENDPOINT": "http://127.0.0.1:6754", "MQLITE_TOKEN": "mqk_..."}}}}`,
    )
    .action(async (flags: ConnectionFlags) => {
      const target = resolveTarget(flags, process.env, { defaultEndpoint: DEFAULT_ENDPOINT });
      const { serveStdio } = await import("../../mcp/stdio.js");
      const opened = await openTarget(target);
      try {
        await serveStdio(opened.broker);
      } finally {
        await opened.close();
      }
    });
}
