import type { Command } from "commander";
import { pino } from "pino";
import { openBroker } from "../../open.js";
import { defaultConsoleDir, type RunningServer, startServer } from "../../server/index.js";
import { VERSION } from "../../version.js";
import { type ServeConfig, serveConfig } from "../serve/config.js";

/** What `serve` prints before the access log starts: where it listens and how to authenticate. */
function banner(config: ServeConfig, server: RunningServer): string {
  const lines = [`mqlite ${VERSION} serving ${config.db} at ${server.url}`];
  if (config.ui) lines.push(`console: ${server.url}/ui/`);
  if (config.auth.mode === "generated") {
    lines.push(`token: ${config.auth.tokens[0]} (generated; set MQLITE_TOKENS to choose your own)`);
  } else if (config.auth.mode === "off") {
    lines.push("auth: off (MQLITE_TOKENS=off)");
  } else {
    lines.push(`auth: ${config.auth.tokens.length} token(s) from MQLITE_TOKENS`);
  }
  return `${lines.join("\n")}\n`;
}

/** A repeated stop signal within this window is the same request delivered twice. */
const ECHO_WINDOW_MS = 1000;

/**
 * Runs the served broker until SIGINT or SIGTERM, then stops gracefully (25 s grace); a second
 * signal, a second or more after the first, exits at once with status 1.
 */
async function serve(config: ServeConfig, insecure: boolean): Promise<void> {
  const logger = pino({ level: config.logLevel });
  const broker = await openBroker(config.db, {
    synchronous: config.synchronous,
    maxMessageBytes: config.maxMessageBytes,
    dlqRetention: config.dlqRetention,
    logger,
  });
  const tokens = config.auth.tokens;
  if (tokens.length === 0 && config.cors === "*")
    logger.warn({}, "MQLITE_CORS=* with auth off: any web page can call this broker");
  if (insecure && tokens.length === 0) logger.warn({}, "--insecure-allow-remote: serving without auth");
  let server: RunningServer;
  try {
    server = await startServer({
      broker,
      host: config.addr.host,
      port: config.addr.port,
      tokens,
      insecureAllowRemote: insecure,
      ...(config.cors !== undefined && { cors: config.cors }),
      ui: config.ui ? { dir: defaultConsoleDir() } : false,
      ...(config.maxLongPolls !== undefined && { maxLongPolls: config.maxLongPolls }),
      ...(config.maxLargeBodyBytes !== undefined && { maxLargeBodyBytes: config.maxLargeBodyBytes }),
      ...(config.largeBodyMinBytesPerSecond !== undefined && {
        largeBodyMinBytesPerSecond: config.largeBodyMinBytesPerSecond,
      }),
      logger,
    });
  } catch (err) {
    await broker.close();
    throw err;
  }
  process.stdout.write(banner(config, server));
  await new Promise<void>((resolve) => {
    let stoppingSince: number | undefined;
    const stop = (signal: NodeJS.Signals) => {
      if (stoppingSince !== undefined) {
        // Ctrl-C reaches every process of the terminal's foreground group, and npm forwards the
        // signal it got to its script: under `npm start` one press arrives twice, milliseconds
        // apart. Only a later signal is someone insisting.
        if (Date.now() - stoppingSince < ECHO_WINDOW_MS) return;
        logger.warn({ signal }, "second signal: exiting now");
        process.exit(1);
      }
      stoppingSince = Date.now();
      logger.info({ signal }, "stopping");
      server.close().then(resolve, (err) => {
        logger.error({ err: String(err) }, "stop failed");
        resolve();
      });
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  logger.info({}, "stopped");
}

/** `mqlite serve [--addr host:port] [--insecure-allow-remote]`. */
export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("serve the broker over HTTP (RPCs, /metrics, /healthz, /ui)")
    .option("--addr <host:port>", "listen address (default MQLITE_ADDR, else 127.0.0.1:6754)")
    .option("--insecure-allow-remote", "allow a non-loopback address with auth off")
    .addHelpText(
      "after",
      `
Environment:
  MQLITE_DB                 database file (default ./mq.db; file: prefix and :memory: accepted)
  MQLITE_ADDR               listen address (default 127.0.0.1:6754)
  MQLITE_TOKENS             comma-separated bearer tokens; unset: one is generated; off: no auth;
                            each [name:]token[=scope+scope] with scopes manage, monitor,
                            send:<glob>, listen:<glob> (no scopes: full access)
  MQLITE_SYNC               NORMAL (default), FULL, OFF or EXTRA
  MQLITE_MAX_MESSAGE_BYTES  largest message body (default 1048576)
  MQLITE_CORS               allowed origin (default * with auth, none without); off disables
  MQLITE_UI                 off/false/0/no disables the console at /ui
  MQLITE_DLQ_MAX_AGE        dead-letter retention by age, a Go duration (default 336h)
  MQLITE_DLQ_MAX_COUNT      dead letters kept per queue (default 1000000)
  MQLITE_DLQ_MAX_BYTES      dead-letter body bytes kept per queue (default 0 = no bound)
  MQLITE_DLQ_RETENTION      off disables the three bounds above
  MQLITE_LOG_LEVEL          access log level (default info)
  MQLITE_MAX_LONG_POLLS     long-polls parked at once; beyond: 429 resource_exhausted (default 1000)
  MQLITE_MAX_LARGE_BODY_BYTES  bytes of large request bodies read at once (default 33554432)
  MQLITE_LARGE_BODY_MIN_RATE   bytes/s a large body let in must arrive at, after 5 s (default
                            1048576; 0: no bound)`,
    )
    .action(async (options: { addr?: string; insecureAllowRemote?: boolean }) => {
      const config = serveConfig(options, process.env);
      for (const line of config.warnings) process.stderr.write(`${line}\n`);
      await serve(config, options.insecureAllowRemote === true);
    });
}
