import type { IncomingMessage } from "node:http";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Context, Hono } from "hono";
import { createMcpServer } from "../mcp/registry.js";
import { SLICED_DECODE_BYTES } from "../wire/index.js";
import { withAnswerRooms } from "./answer-room.js";
import type { ServerEnv, ServerState } from "./env.js";
import { LargeBodyLimitError } from "./large-bodies.js";
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
 * The room a request's body takes in the large-body budget: its Content-Length from 256 KiB on, a
 * streamed body (whose size the transport learns only as it reads) a maximal one; 0 for the rest.
 */
function largeBodyBytes(c: Context<ServerEnv>): number {
  if (c.req.header("transfer-encoding") !== undefined) return MAX_REQUEST_BYTES;
  const length = c.req.header("content-length");
  if (length === undefined) return 0;
  const n = Number(length);
  return n >= SLICED_DECODE_BYTES ? Math.min(n, MAX_REQUEST_BYTES) : 0;
}

/** A refusal for want of room, as the JSON-RPC error the transport answers others with. */
const busy = (err: LargeBodyLimitError) =>
  new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: err.message }, id: null }), {
    status: 429,
    headers: { "Content-Type": "application/json", "Retry-After": `${err.retryAfterS}`, Connection: "close" },
  });

/**
 * The MCP tools over Streamable HTTP at `/mcp`, behind the same Bearer auth as every other route;
 * each tool checks the token's scopes as the RPC it mirrors does.
 * Stateless: each POST gets its own server and transport (no session to keep), answered with JSON.
 * A large body waits for its room in the server's large-body budget first, as an RPC's does.
 */
export function registerMcpRoute(app: Hono<ServerEnv>, state: ServerState): void {
  app.all("/mcp", async (c) => {
    note(c, { rpc: "mcp" });
    if (c.req.method !== "POST") return methodNotAllowed();
    const bytes = largeBodyBytes(c);
    let release: (() => void) | undefined;
    try {
      release = bytes > 0 ? await state.largeBodies.take(bytes, c.req.raw.signal) : undefined;
    } catch (err) {
      if (err instanceof LargeBodyLimitError) return busy(err);
      throw err;
    }
    // A body that does not arrive in time once let in (see `LargeBodyBudget.arrivalMs`): its
    // connection is cut, which ends the transport's read of it.
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const late = release
      ? setTimeout(() => {
          if (incoming && !incoming.readableEnded) incoming.destroy();
        }, state.largeBodies.arrivalMs(bytes))
      : undefined;
    try {
      return await answer(c, state);
    } finally {
      clearTimeout(late);
      release?.();
    }
  });
}

/**
 * One request's answer: a server and transport of its own (stateless), answered with JSON. Its
 * tools' reads that list messages take answer rooms as an RPC's do, given back once it is written.
 */
async function answer(c: Context<ServerEnv>, state: ServerState): Promise<Response> {
  const rooms = withAnswerRooms(state.brokerFor(c.get("principal")), state.largeBodies);
  const server = createMcpServer(rooms.broker, { stopping: state.stopping });
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
    // Answered with JSON: every tool call has run, and its rooms are known.
    rooms.releaseAfter(c);
    await server.close();
  }
}
