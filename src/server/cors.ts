import type { Context } from "hono";
import { isRpcPath } from "../wire/index.js";
import type { ServerEnv } from "./env.js";

/**
 * CORS as the original (spec §1.4): every response carries the configured origin verbatim (with
 * `Vary: Origin` unless it is `*`), and an OPTIONS request to any path is a 204 preflight answered
 * before auth (the returned response; undefined lets the request go on). Written here rather than with `hono/cors`, whose headers differ from the pinned ones
 * and which touches the response before the handler runs (that costs every request a full
 * `Response` with a body stream on @hono/node-server).
 */
export function corsApplier(origin: string): (c: Context<ServerEnv>) => Response | undefined {
  const vary = origin !== "*";
  const rpcHeaders: Record<string, string> = vary
    ? { "Access-Control-Allow-Origin": origin, Vary: "Origin" }
    : { "Access-Control-Allow-Origin": origin };
  return (c) => {
    // An RPC answers with `json()`, which writes these with its own headers.
    if (c.req.method !== "OPTIONS" && isRpcPath(c.req.path)) {
      c.set("cors", rpcHeaders);
      return undefined;
    }
    // Prepared headers: merged into whatever response the rest of the chain creates.
    c.header("Access-Control-Allow-Origin", origin);
    if (vary) c.header("Vary", "Origin");
    // Our /mcp route (Streamable HTTP) has a session header a browser client must send and read.
    const mcp = c.req.path === "/mcp";
    if (mcp) c.header("Access-Control-Expose-Headers", "Mcp-Session-Id");
    if (c.req.method !== "OPTIONS") return undefined;
    if (mcp) {
      c.header("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
      c.header(
        "Access-Control-Allow-Headers",
        "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID",
      );
    } else {
      c.header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      c.header("Access-Control-Allow-Headers", "Authorization, Content-Type");
    }
    c.header("Access-Control-Max-Age", "86400");
    return c.body(null, 204);
  };
}

/** The effective origin: `"*"` by default when auth is on, off by default without auth. */
export function resolveCors(option: string | false | undefined, auth: boolean): string | false {
  if (option === undefined) return auth ? "*" : false;
  if (option === false || option.toLowerCase() === "off") return false;
  return option;
}
