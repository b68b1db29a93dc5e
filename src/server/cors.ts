import type { MiddlewareHandler } from "hono";

/**
 * CORS as the original (spec §1.4): every response carries the configured origin verbatim (with
 * `Vary: Origin` unless it is `*`), and an OPTIONS request to any path is a 204 preflight answered
 * before auth. Written here rather than with `hono/cors`, whose headers differ from the pinned ones
 * and which touches the response before the handler runs (that costs every request a full
 * `Response` with a body stream on @hono/node-server).
 */
export function corsMiddleware(origin: string): MiddlewareHandler {
  const vary = origin !== "*";
  return async (c, next) => {
    // Prepared headers: merged into whatever response the rest of the chain creates.
    c.header("Access-Control-Allow-Origin", origin);
    if (vary) c.header("Vary", "Origin");
    // Our /mcp route (Streamable HTTP) has a session header a browser client must send and read.
    const mcp = c.req.path === "/mcp";
    if (mcp) c.header("Access-Control-Expose-Headers", "Mcp-Session-Id");
    if (c.req.method !== "OPTIONS") return next();
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
