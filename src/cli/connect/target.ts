import { UsageError } from "../errors.js";
import { parseEndpoint, sameBroker } from "./endpoint.js";

/** The connection flags every data and admin command takes. */
export interface ConnectionFlags {
  endpoint?: string;
  /** `--token=` (empty) sends no credential, whatever the environment or the DSN says. */
  token?: string;
  db?: string;
}

/** Where a command runs: against a served broker, or on a database opened in this process. */
export type Target = { mode: "remote"; url: string; token?: string } | { mode: "embedded"; db: string };

export interface ResolveOptions {
  /** Used when no endpoint is named (the MCP server's `http://127.0.0.1:6754`), instead of a file. */
  defaultEndpoint?: string;
  /** Where a warning goes (the ambient token withheld from another host). */
  warn?: (line: string) => void;
}

/** The database a command opens when nothing is named, as the original: `./mq.db` in the working directory. */
export const DEFAULT_DB = "./mq.db";

const set = (value: string | undefined): value is string => value !== undefined && value.trim() !== "";

function remote(endpoint: string, token: string | undefined): Target {
  const parsed = parseEndpoint(endpoint, "endpoint");
  // A non-empty --token or MQLITE_TOKEN wins over the DSN's; `--token=` removes both.
  const chosen = token === undefined ? parsed.token : token || undefined;
  return chosen ? { mode: "remote", url: parsed.url, token: chosen } : { mode: "remote", url: parsed.url };
}

/**
 * Picks the target as the original does. `--endpoint` replaces `MQLITE_ENDPOINT`, even when
 * empty (`--endpoint=` forces a local database); a non-empty endpoint means client mode. The
 * ambient `MQLITE_TOKEN` goes only to the broker `MQLITE_ENDPOINT` names, never to another one
 * typed on the command line (a warning says so). Without an endpoint: `--db` (ours), else
 * `MQLITE_DB`, else `./mq.db`. `--db` and `--endpoint` together are refused.
 */
export function resolveTarget(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv,
  options: ResolveOptions = {},
): Target {
  if (set(flags.endpoint) && flags.db !== undefined)
    throw new UsageError("--endpoint and --db name two brokers: give one");
  const envEndpoint = env.MQLITE_ENDPOINT?.trim() ?? "";
  const envToken = env.MQLITE_TOKEN || undefined;
  const endpoint = flags.endpoint !== undefined ? flags.endpoint.trim() : envEndpoint;
  if (endpoint !== "" && flags.db === undefined) {
    if (flags.token !== undefined) return remote(endpoint, flags.token);
    if (flags.endpoint === undefined || (envEndpoint !== "" && sameBroker(endpoint, envEndpoint)))
      return remote(endpoint, envToken);
    if (envToken)
      (options.warn ?? ((l) => process.stderr.write(`${l}\n`)))(
        "warning: --endpoint changes the target host; MQLITE_TOKEN is NOT forwarded to it — pass --token to authenticate",
      );
    return remote(endpoint, undefined);
  }
  if (flags.db !== undefined) return { mode: "embedded", db: flags.db.trim() || DEFAULT_DB };
  if (set(env.MQLITE_DB)) return { mode: "embedded", db: env.MQLITE_DB.trim() };
  if (options.defaultEndpoint) return remote(options.defaultEndpoint, flags.token ?? envToken);
  return { mode: "embedded", db: DEFAULT_DB };
}
