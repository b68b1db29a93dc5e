import type { Context } from "hono";
import { MqliteError, PermissionDeniedError } from "../contract/errors.js";
import { isRpcPath } from "../wire/index.js";
import { isOpenPath } from "./auth.js";
import type { ServerEnv } from "./env.js";
import { isLoopback } from "./loopback.js";

/** An RPC sent with a body that is not declared JSON, on a server without auth (415). */
export class UnsupportedContentTypeError extends MqliteError {
  constructor(message: string) {
    super("invalid_argument", 415, message);
  }
}

/** What `requestGuard` checks against. */
export interface RequestGuardOptions {
  /** True when bearer tokens are configured. */
  auth: boolean;
  /** The effective CORS origin, or false for none. */
  cors: string | false;
  /** The address the server listens on: when it is loopback, the `Host` header is checked. */
  bindHost?: string;
  /** More `Host` names to accept on a loopback server (a name of this machine in /etc/hosts). */
  allowedHosts?: readonly string[];
}

/** The name of a `Host` header without its port (`[::1]:6754` → `::1`), lower-cased. */
export function hostName(header: string): string {
  const value = header.trim().toLowerCase();
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    return end === -1 ? value : value.slice(1, end);
  }
  const colon = value.indexOf(":");
  return colon === -1 ? value : value.slice(0, colon);
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * The refusals that keep a web page from using a broker served on this machine, checked before
 * auth:
 * - a loopback server answers only to a `Host` naming loopback (or the bound address): a page on
 *   another site that rebinds its DNS name to 127.0.0.1 sends its own name as `Host`;
 * - a request from a browser `Origin` that is neither the server's own nor the CORS origin is
 *   refused on every path that is not open, so a page cannot act even where it could not read;
 * - without auth, an RPC must declare a JSON body: a cross-site form or a "simple" `fetch` sends
 *   `text/plain`, form types or none, and no preflight asks first. With auth a page cannot send
 *   the token, and the original's clients (`curl -d`) send a form type, so this is not checked.
 */
export function requestGuard(
  options: RequestGuardOptions,
): (c: Context<ServerEnv>) => MqliteError | undefined {
  const checkHost = options.bindHost !== undefined && isLoopback(options.bindHost);
  const hosts = new Set(
    [options.bindHost ?? "", ...(options.allowedHosts ?? [])].map((h) => h.toLowerCase()),
  );
  const { auth, cors } = options;
  return (c) => {
    const host = c.req.header("host");
    if (checkHost && host !== undefined) {
      const name = hostName(host);
      if (!isLoopback(name) && !hosts.has(name)) {
        return new PermissionDeniedError(
          `mqlite: Host "${host}" does not name this server (it listens on loopback; allowedHosts adds names)`,
        );
      }
    }
    const path = c.req.path;
    const origin = c.req.header("origin");
    if (origin !== undefined && cors !== "*" && origin !== cors && !isOpenPath(path)) {
      if (host === undefined || !sameHost(origin, host)) {
        return new PermissionDeniedError(
          `mqlite: Origin "${origin}" is not allowed (the CORS setting allows ${cors === false ? "none" : `"${cors}"`})`,
        );
      }
    }
    if (!auth && c.req.method === "POST" && isRpcPath(path)) {
      const type = c.req.header("content-type");
      if (type === undefined || !JSON_TYPE.test(type)) {
        return new UnsupportedContentTypeError(
          `mqlite: an RPC takes Content-Type: application/json (got ${type === undefined ? "none" : `"${type}"`})`,
        );
      }
    }
    return undefined;
  };
}

/** Whether a browser `Origin` is the server's own (same host and port as the request's `Host`). */
function sameHost(origin: string, host: string): boolean {
  try {
    return new URL(origin).host === new URL(`http://${host}`).host;
  } catch {
    return false;
  }
}
