import { UsageError } from "../errors.js";

/** The served broker's default port, which `mqlite://` and `mqlites://` DSNs imply. */
export const DSN_DEFAULT_PORT = 6754;

const SCHEMES: Record<string, string> = {
  "http:": "http:",
  "https:": "https:",
  "mqlite:": "http:",
  "mqlites:": "https:",
};

/**
 * Turns an endpoint into the base URL of a served broker: `mqlite://h` → `http://h:6754`,
 * `mqlites://h` → `https://h:6754` (an explicit port is kept), `http(s)://…` as given. A trailing
 * `/` is dropped; a path prefix (a reverse proxy's) is kept.
 */
export function normalizeEndpoint(raw: string, what = "--endpoint"): string {
  const text = raw.trim();
  if (text === "") throw new UsageError(`${what} is blank`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${what} "${raw}" is not a URL (use http://host:port or mqlite://host)`);
  }
  const scheme = SCHEMES[url.protocol];
  if (!scheme) throw new UsageError(`${what} "${raw}": the scheme must be http, https, mqlite or mqlites`);
  if (url.hostname === "") throw new UsageError(`${what} "${raw}" has no host`);
  if (url.search || url.hash || url.username || url.password)
    throw new UsageError(`${what} "${raw}": no query, fragment or credentials (use --token)`);
  const dsn = scheme !== url.protocol;
  const port = url.port || (dsn ? String(DSN_DEFAULT_PORT) : "");
  const path = url.pathname.replace(/\/+$/, "");
  return `${scheme}//${url.hostname}${port ? `:${port}` : ""}${path}`;
}
