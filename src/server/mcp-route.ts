import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Hono } from "hono";
import { createMcpServer } from "../mcp/registry.js";
import type { ServerEnv, ServerState } from "./env.js";
import { MAX_REQUEST_BYTES } from "./options.js";
import { note } from "./respond.js";

/** A JSON-RPC error for what a stateless endpoint does not offer (a GET stream, a session to delete). */
const methodNotAllowed = () =>
  new Response(
    JSON.stringify({
      jsonrpc: "2.0",
      error: { code: -32000, message: "Method not allowed: POST only" },
      id: null,
    }),
    { status: 405, headers: { "Content-Type": "application/json", Allow: "POST" } },
  );

/**
 * The MCP tools over Streamable HTTP at `/mcp`, behind the same Bearer auth as every other route;
 * each tool checks the token's scopes as the RPC it mirrors does.
 * Stateless: each POST gets its own server and transport (no session to keep), answered with JSON.
 */
export function registerMcpRoute(app: Hono<ServerEnv>, state: ServerState): void {
  app.all("/mcp", async (c) => {
    note(c, { rpc: "mcp" });
    if (c.req.method !== "POST") return methodNotAllowed();
    const server = createMcpServer(state.brokerFor(c.get("principal")), { stopping: state.stopping });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MAX_REQUEST_BYTES,
      // The gate checks Host and Origin on every route; the transport checks its own too.
      enableDnsRebindingProtection: state.mcpAllowedHosts.length > 0,
      allowedHosts: state.mcpAllowedHosts,
    });
    try {
      await server.connect(transport);
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });
}
