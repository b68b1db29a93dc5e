import { UsageError } from "../errors.js";

/** The served broker's default port, which `mqlite://` and `mqlites://` DSNs imply. */
export const DSN_DEFAULT_PORT = 6754;

/** A parsed endpoint: the base URL requests go to, and the token a DSN carries (`mqlite://tok@host`). */
export interface Endpoint {
  url: string;
  token?: string;
}

/**
 * Parses an endpoint as the original does:
 * - `http://…` and `https://…` (exact lower-case prefix) are used as given, trailing `/` dropped;
 * - `mqlite://[tok@]host[:port]` → `http://host:port` (port 6754 when omitted), the user part as
 *   the token, path and query dropped; `mqlites://…` or `?tls=true` → `https://`.
 * Credentials inside an `http(s)://` URL are refused (use --token or an `mqlite://tok@host` DSN),
 * as are a query or fragment there: they would only garble every request's URL.
 */
export function parseEndpoint(raw: string, what = "--endpoint"): Endpoint {
  const text = raw.trim();
  if (text === "") throw new UsageError(`${what}: empty connection string`);
  if (text.startsWith("http://") || text.startsWith("https://")) return { url: plainUrl(text, raw, what) };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${what} "${raw}": bad connection string (use mqlite://host or http://host:port)`);
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== "mqlite" && scheme !== "mqlites")
    throw new UsageError(
      `${what} "${raw}": unsupported scheme "${scheme}" (use mqlite://, mqlites://, http://, https://)`,
    );
  if (url.hostname === "") throw new UsageError(`${what} "${raw}": missing host in connection string`);
  const tls = scheme === "mqlites" || url.searchParams.get("tls") === "true";
  const endpoint: Endpoint = {
    url: `${tls ? "https" : "http"}://${url.hostname}:${url.port || DSN_DEFAULT_PORT}`,
  };
  const token = url.username ? decodeURIComponent(url.username) : "";
  if (token) endpoint.token = token;
  return endpoint;
}

function plainUrl(text: string, raw: string, what: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${what} "${raw}" is not a URL (use http://host:port or mqlite://host)`);
  }
  if (url.hostname === "") throw new UsageError(`${what} "${raw}": missing host in connection string`);
  if (url.username || url.password)
    throw new UsageError(
      `${what} "${raw}": no credentials in an http(s) URL (use --token or mqlite://token@host)`,
    );
  if (url.search || url.hash)
    throw new UsageError(`${what} "${raw}": no query or fragment in an http(s) URL`);
  return text.replace(/\/+$/, "");
}

/** The base URL alone (the tests' and the MCP server's view of an endpoint). */
export function normalizeEndpoint(raw: string, what = "--endpoint"): string {
  return parseEndpoint(raw, what).url;
}

/** Whether two endpoints name the same broker: the same text, or the same base URL. */
export function sameBroker(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return parseEndpoint(a).url === parseEndpoint(b).url;
  } catch {
    return false;
  }
}
