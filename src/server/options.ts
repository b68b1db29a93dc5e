import type { Broker } from "../contract/broker.js";
import type { Logger } from "../contract/logger.js";
import type { TokenEntry } from "./access/tokens.js";
import type { PeriodicControl } from "./periodic-route.js";
import type { UiOptions } from "./ui.js";

/** Options of the served broker (`createServerApp`, `startServer`). */
export interface ServerOptions {
  /** The broker to serve: usually an embedded `SqliteBroker`, but any `Broker` works. */
  broker: Broker;
  /**
   * Bearer tokens; empty or absent turns auth off. Each is `token` (full access), `token=scopes` or
   * `name:token=scopes` with `+`-separated scopes (`manage`, `monitor`, `send:<glob>`,
   * `listen:<glob>`), or the same as a `TokenSpec` object. See docs/security.md.
   */
  tokens?: readonly TokenEntry[];
  /**
   * `Access-Control-Allow-Origin` for every response, or `false` for no CORS. Absent: `"*"` when
   * auth is on, off when it is not (the original's rule).
   */
  cors?: string | false;
  /**
   * Serve the console's static files from `dir` under `/ui/`, or `false` (default) for none.
   * `sourceMaps: true` serves the bundle's source map too (off by default).
   */
  ui?: UiOptions | false;
  /** Largest message body the server accepts (413 beyond); the broker's own limit applies as well. */
  maxMessageBytes?: number;
  /** The access log (one line per request) and server warnings. Default: pino at info to stdout. */
  logger?: Logger;
  /** The version in the discovery card and /openapi.json. Default: the package version. */
  version?: string;
  /** Close the broker once the server has stopped. Default true. */
  closeBroker?: boolean;
  /** How long a graceful stop waits for calls in flight before cutting connections. Default 25 s. */
  graceMs?: number;
  /**
   * The most long-polls (Receive, ReceiveAny, AwaitSettled with a wait over 0) parked at once; one
   * more is refused with 429 `resource_exhausted` and `Retry-After`. Default 1000.
   */
  maxLongPolls?: number;
  /** The periodic jobs the console lists, pauses and resumes (`queue.dashboard()` passes its own). */
  periodic?: PeriodicControl;
  /**
   * The most long-polls one client may have parked at once, beside `maxLongPolls`: a client is its
   * bearer token when auth is on, its remote address otherwise. Default 100.
   */
  maxLongPollsPerClient?: number;
  /**
   * The bytes of large request bodies (256 KiB and up, or a streamed body past 256 KiB, counted at
   * the 32 MiB cap) read and decoded at once; beyond it a request waits its turn before its body is
   * read. Default 32 MiB: one maximal request (decoding runs on the one event loop, so bodies
   * decoded side by side would finish no sooner).
   */
  maxLargeBodyBytes?: number;
  /** How long a large body waits for room in `maxLargeBodyBytes` before a 429 with `Retry-After`. Default 10 s. */
  largeBodyWaitMs?: number;
  /**
   * The slowest a large body may arrive once it holds its room, in bytes per second after
   * `largeBodyGraceMs`: one that takes longer than the grace plus its size at this rate is refused
   * (429, the connection closed). Default 1 MiB/s (a 32 MiB body has 37 s).
   */
  largeBodyMinBytesPerSecond?: number;
  /** Time a large body holding room has before `largeBodyMinBytesPerSecond` counts. Default 5 s. */
  largeBodyGraceMs?: number;
  /**
   * More `Host` names a loopback server answers to, besides `localhost`, loopback addresses and
   * the bound address (a request naming any other host is refused 403: DNS rebinding).
   */
  allowedHosts?: readonly string[];
}

/** Where `startServer` listens. */
export interface ListenOptions {
  /** Default `127.0.0.1`; `""` listens on every interface. */
  host?: string;
  /** Default 6754; 0 picks a free port. */
  port?: number;
  /**
   * Serve a non-loopback address without tokens. Default false: `startServer` refuses, as the CLI
   * does without `--insecure-allow-remote`, since anyone who can reach the address has full access.
   */
  insecureAllowRemote?: boolean;
}

export type StartServerOptions = ServerOptions & ListenOptions;

/** A running served broker. */
export interface RunningServer {
  /** `http://host:port` (IPv6 hosts in brackets). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /**
   * Graceful stop: refuse new calls, wake long-polls with an empty answer, finish calls in flight
   * (cutting connections after `graceMs`), then close the broker.
   */
  close(): Promise<void>;
}

/** The request-size cap of every RPC (32 MiB), as the original's MaxBodyBytes. */
export { MAX_REQUEST_BYTES } from "../contract/limits.js";
export const DEFAULT_GRACE_MS = 25_000;
export const DEFAULT_MAX_LONG_POLLS = 1000;
export const DEFAULT_MAX_LONG_POLLS_PER_CLIENT = 100;
export const DEFAULT_MAX_LARGE_BODY_BYTES = 32 * 2 ** 20;
export const DEFAULT_LARGE_BODY_WAIT_MS = 10_000;
export const DEFAULT_PORT = 6754;
