import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";

/**
 * CORS as the original (spec §1.4): every response carries the configured origin verbatim (with
 * `Vary: Origin` unless it is `*`), and an OPTIONS request to any path is a 204 preflight answered
 * before auth.
 */
export function corsMiddleware(origin: string): MiddlewareHandler {
  return cors({
    origin: origin === "*" ? "*" : () => origin,
    // One element each, so that the header reads exactly "GET, POST, OPTIONS".
    allowMethods: ["GET, POST, OPTIONS"],
    allowHeaders: ["Authorization, Content-Type"],
    maxAge: 86400,
  });
}

/** The effective origin: `"*"` by default when auth is on, off by default without auth. */
export function resolveCors(option: string | false | undefined, auth: boolean): string | false {
  if (option === undefined) return auth ? "*" : false;
  if (option === false || option.toLowerCase() === "off") return false;
  return option;
}
