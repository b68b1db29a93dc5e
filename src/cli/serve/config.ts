import type { DlqBounds, SyncMode } from "../../open.js";
import { EnvReader } from "../env.js";
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
  /** `MQLITE_MAX_LARGE_BODY_BYTES`: large request bodies read at once, in bytes (default: the server's, 32 MiB). */
  maxLargeBodyBytes: number | undefined;
  /**
   * `MQLITE_LARGE_BODY_MIN_RATE`: bytes per second a large body let in must arrive at (after 5 s;
   * default: the server's, 1 MiB/s); 0 turns the rule off.
   */
  largeBodyMinBytesPerSecond: number | undefined;
  /** One stderr line per setting whose value was ignored (the default applies). */
  warnings: string[];
}

export interface ServeFlags {
  addr?: string;
  insecureAllowRemote?: boolean;
}

export const DEFAULT_ADDR = "127.0.0.1:6754";
export const DEFAULT_DB = "./mq.db";
const FOURTEEN_DAYS_MS = 14 * 24 * 3600 * 1000;
const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

/** Dead-letter retention: a bound of 0 or less turns that bound off, as in the original. */
function dlqRetention(env: NodeJS.ProcessEnv, read: EnvReader): DlqBounds {
  if (env.MQLITE_DLQ_RETENTION?.toLowerCase() === "off") return { maxAgeMs: 0, maxCount: 0, maxBytes: 0 };
  return {
    maxAgeMs: Math.max(0, read.duration("MQLITE_DLQ_MAX_AGE", FOURTEEN_DAYS_MS)),
    maxCount: Math.max(0, read.integer("MQLITE_DLQ_MAX_COUNT", 1_000_000)),
    maxBytes: Math.max(0, read.integer("MQLITE_DLQ_MAX_BYTES", 0)),
  };
}

const UI_OFF = ["off", "false", "0", "no"];

/**
 * Resolves `serve`'s configuration (spec §5, §1.3): flags win over the environment. A value that
 * does not parse is ignored with a warning, as in the original; only MQLITE_SYNC, a blank address,
 * an unusable MQLITE_TOKENS and an open listen without auth stop the start.
 */
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
  const read = new EnvReader(env);
  const synchronous = read.synchronous();
  const maxLongPolls = read.integer("MQLITE_MAX_LONG_POLLS", 0, (n) => n > 0);
  const maxLargeBodyBytes = read.integer("MQLITE_MAX_LARGE_BODY_BYTES", 0, (n) => n > 0);
  const largeBodyMinRate = read.integer("MQLITE_LARGE_BODY_MIN_RATE", -1, (n) => n >= 0);
  return {
    addr,
    db: env.MQLITE_DB?.trim() || DEFAULT_DB,
    auth,
    synchronous,
    maxMessageBytes: read.maxMessageBytes(),
    cors: env.MQLITE_CORS?.trim() || undefined,
    ui: !UI_OFF.includes((env.MQLITE_UI ?? "").trim().toLowerCase()),
    dlqRetention: dlqRetention(env, read),
    logLevel: read.choice("MQLITE_LOG_LEVEL", LOG_LEVELS, "info"),
    maxLongPolls: maxLongPolls > 0 ? maxLongPolls : undefined,
    maxLargeBodyBytes: maxLargeBodyBytes > 0 ? maxLargeBodyBytes : undefined,
    largeBodyMinBytesPerSecond: largeBodyMinRate >= 0 ? largeBodyMinRate : undefined,
    warnings: read.warnings,
  };
}
