import type { DlqBounds } from "../../engine/dead-letters.js";
import { parseSyncMode, type SyncMode } from "../../store/sync-mode.js";
import { parseGoDuration } from "../duration.js";
import { CliError } from "../errors.js";
import { isLoopback, type ListenAddr, parseAddr } from "./addr.js";
import { parseTokens, type TokenSetting } from "./tokens.js";

/** Everything `mqlite serve` needs, resolved from flags and environment. */
export interface ServeConfig {
  addr: ListenAddr;
  db: string;
  auth: TokenSetting;
  synchronous: SyncMode;
  maxMessageBytes: number | undefined;
  /** `MQLITE_CORS` as given (undefined: the default for the auth mode). */
  cors: string | undefined;
  ui: boolean;
  dlqRetention: DlqBounds;
  logLevel: string;
  /** `MQLITE_MAX_LONG_POLLS`: long-polls parked at once (default: the server's, 1000). */
  maxLongPolls: number | undefined;
}

export interface ServeFlags {
  addr?: string;
  insecureAllowRemote?: boolean;
}

export const DEFAULT_ADDR = "127.0.0.1:6754";
export const DEFAULT_DB = "./mq.db";
const FOURTEEN_DAYS_MS = 14 * 24 * 3600 * 1000;
const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

function count(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw.trim());
  if (!Number.isSafeInteger(n) || n < min)
    throw new CliError(`${name} must be an integer ≥ ${min} (got "${raw}")`);
  return n;
}

function dlqRetention(env: NodeJS.ProcessEnv): DlqBounds {
  if (env.MQLITE_DLQ_RETENTION?.trim().toLowerCase() === "off")
    return { maxAgeMs: 0, maxCount: 0, maxBytes: 0 };
  const age = env.MQLITE_DLQ_MAX_AGE;
  const maxAgeMs =
    age === undefined || age.trim() === "" ? FOURTEEN_DAYS_MS : parseGoDuration(age, "MQLITE_DLQ_MAX_AGE");
  if (maxAgeMs < 0) throw new CliError("MQLITE_DLQ_MAX_AGE must not be negative");
  return {
    maxAgeMs,
    maxCount: count(env, "MQLITE_DLQ_MAX_COUNT", 1_000_000, 0),
    maxBytes: count(env, "MQLITE_DLQ_MAX_BYTES", 0, 0),
  };
}

const UI_OFF = ["off", "false", "0", "no"];

/** Resolves `serve`'s configuration (spec §5, §1.3): flags win over the environment. */
export function serveConfig(flags: ServeFlags, env: NodeJS.ProcessEnv): ServeConfig {
  const addr =
    flags.addr !== undefined
      ? parseAddr(flags.addr, "--addr")
      : parseAddr(env.MQLITE_ADDR ?? DEFAULT_ADDR, "MQLITE_ADDR");
  const auth = parseTokens(env.MQLITE_TOKENS);
  if (auth.mode === "off" && !isLoopback(addr.host) && !flags.insecureAllowRemote) {
    throw new CliError(
      `refusing to serve ${addr.host || "every interface"} without auth: set MQLITE_TOKENS, ` +
        "bind a loopback address, or pass --insecure-allow-remote",
    );
  }
  let synchronous: SyncMode;
  try {
    synchronous = parseSyncMode(env.MQLITE_SYNC?.trim());
  } catch {
    throw new CliError(`MQLITE_SYNC must be one of NORMAL, FULL, OFF, EXTRA (got "${env.MQLITE_SYNC}")`);
  }
  const maxBytes = env.MQLITE_MAX_MESSAGE_BYTES;
  const logLevel = (env.MQLITE_LOG_LEVEL?.trim() || "info").toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new CliError(
      `MQLITE_LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")} (got "${env.MQLITE_LOG_LEVEL}")`,
    );
  }
  const db = env.MQLITE_DB?.trim() || DEFAULT_DB;
  return {
    addr,
    db,
    auth,
    synchronous,
    maxMessageBytes:
      maxBytes === undefined || maxBytes.trim() === ""
        ? undefined
        : count(env, "MQLITE_MAX_MESSAGE_BYTES", 0, 1),
    cors: env.MQLITE_CORS?.trim() || undefined,
    ui: !UI_OFF.includes((env.MQLITE_UI ?? "").trim().toLowerCase()),
    dlqRetention: dlqRetention(env),
    logLevel,
    maxLongPolls:
      env.MQLITE_MAX_LONG_POLLS === undefined || env.MQLITE_MAX_LONG_POLLS.trim() === ""
        ? undefined
        : count(env, "MQLITE_MAX_LONG_POLLS", 0, 1),
  };
}
