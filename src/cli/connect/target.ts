import { UsageError } from "../errors.js";
import { normalizeEndpoint } from "./endpoint.js";

/** The connection flags every data and admin command takes. */
export interface ConnectionFlags {
  endpoint?: string;
  /** `--token=` (empty) sends no credential, whatever the environment says. */
  token?: string;
  db?: string;
}

/** Where a command runs: against a served broker, or on a database opened in this process. */
export type Target = { mode: "remote"; url: string; token?: string } | { mode: "embedded"; db: string };

export interface ResolveOptions {
  /** Used when neither an endpoint nor a database is named (the MCP server's `http://127.0.0.1:6754`). */
  defaultEndpoint?: string;
}

const set = (value: string | undefined): value is string => value !== undefined && value.trim() !== "";

function remote(url: string, token: string | undefined): Target {
  return token ? { mode: "remote", url, token } : { mode: "remote", url };
}

/**
 * Picks the target, as the original does: client mode wins over a database (`--endpoint` or
 * `MQLITE_ENDPOINT` over `MQLITE_DB`), flags win over the environment, and the ambient
 * `MQLITE_TOKEN` goes only to the endpoint the environment names (never to one typed on the
 * command line), so a token cannot leak to another host by accident.
 */
export function resolveTarget(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv,
  options: ResolveOptions = {},
): Target {
  if (flags.endpoint !== undefined && flags.db !== undefined)
    throw new UsageError("--endpoint and --db name two brokers: give one");
  const envEndpoint = set(env.MQLITE_ENDPOINT)
    ? normalizeEndpoint(env.MQLITE_ENDPOINT, "MQLITE_ENDPOINT")
    : undefined;
  const envToken = set(env.MQLITE_TOKEN) ? env.MQLITE_TOKEN.trim() : undefined;
  if (flags.endpoint !== undefined) {
    const url = normalizeEndpoint(flags.endpoint);
    return remote(url, flags.token ?? (url === envEndpoint ? envToken : undefined));
  }
  if (flags.db !== undefined) {
    if (!set(flags.db)) throw new UsageError("--db is blank");
    if (flags.token !== undefined) throw new UsageError("--token is for a served broker, not --db");
    return { mode: "embedded", db: flags.db.trim() };
  }
  if (envEndpoint) return remote(envEndpoint, flags.token ?? envToken);
  if (set(env.MQLITE_DB)) {
    if (flags.token !== undefined) throw new UsageError("--token is for a served broker (set --endpoint)");
    return { mode: "embedded", db: env.MQLITE_DB.trim() };
  }
  if (options.defaultEndpoint) return remote(options.defaultEndpoint, flags.token ?? envToken);
  throw new UsageError(
    "no broker named: set MQLITE_ENDPOINT (or --endpoint) for a served broker, " +
      "or MQLITE_DB (or --db) for a database file",
  );
}
