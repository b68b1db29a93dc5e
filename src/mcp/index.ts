/**
 * The MCP server: the broker's operations as tools for AI agents, over stdio (`mqlite mcp`) and
 * Streamable HTTP (`/mcp` on a served broker). One registry serves both.
 * @module
 */
export { createMcpServer, type McpOptions, TOOLS } from "./registry.js";
export { serveStdio } from "./stdio.js";
export type { McpTool } from "./tool.js";
