import { setMaxListeners } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { pino } from "pino";
import { InvalidArgumentError } from "../contract/errors.js";
import { VERSION } from "../version.js";
import { createServerApp } from "./app.js";
import { InFlight } from "./in-flight.js";
import { isLoopback } from "./loopback.js";
import { DEFAULT_GRACE_MS, DEFAULT_PORT, type RunningServer, type StartServerOptions } from "./options.js";

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    const listening = () => {
      server.off("error", reject);
      resolve(server.address() as AddressInfo);
    };
    // An empty host listens on every interface, as Go's ":6754".
    if (host === "") server.listen(port, listening);
    else server.listen(port, host, listening);
  });
}

/** Every `Host` header naming a loopback server: each loopback name or allowed name, with the port. */
function hostHeaders(host: string, allowed: readonly string[] = [], port: number): string[] {
  const names = new Set([
    "localhost",
    "127.0.0.1",
    "[::1]",
    host.includes(":") ? `[${host}]` : host,
    ...allowed,
  ]);
  return [...names].map((name) => `${name}:${port}`);
}

const sleep = (ms: number) =>
  new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), ms).unref());

/**
 * Serves a broker over HTTP on `host:port` (default 127.0.0.1:6754).
 *
 * ```ts
 * const broker = await openBroker("./mq.db");
 * const server = await startServer({ broker, tokens: ["secret"], port: 6754 });
 * // ... later
 * await server.close(); // graceful: long-polls answer empty, calls in flight finish, broker closed
 * ```
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  const tokens = options.tokens ?? [];
  if (tokens.length === 0 && !isLoopback(host) && options.insecureAllowRemote !== true) {
    throw new InvalidArgumentError(
      `mqlite: refusing to serve ${host || "every interface"} without auth: give tokens, ` +
        "bind a loopback address, or pass insecureAllowRemote: true",
    );
  }
  const logger = options.logger ?? pino();
  const stopping = new AbortController();
  // Every parked long-poll listens to it: many at once is normal, not a leak.
  setMaxListeners(0, stopping.signal);
  const { app, state } = createServerApp(
    { ...options, host, logger, version: options.version ?? VERSION },
    stopping.signal,
  );
  // Node checks the header and request timeouts only every connectionsCheckingInterval (30 s by
  // default), so a client sending its headers a byte at a time held its connection up to 40 s.
  const server = createAdaptorServer({
    fetch: app.fetch,
    serverOptions: { connectionsCheckingInterval: 1000 },
  }) as Server;
  // The original's ReadHeaderTimeout 10 s, ReadTimeout 60 s, IdleTimeout 2 min; no write timeout,
  // so long-polls are never cut (Node's requestTimeout only covers receiving the request).
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 120_000;
  const inFlight = new InFlight();
  inFlight.track(server);
  const address = await listen(server, options.port ?? DEFAULT_PORT, host);
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  if (isLoopback(host)) state.mcpAllowedHosts.push(...hostHeaders(host, options.allowedHosts, address.port));

  let closing: Promise<void> | undefined;
  const stop = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    stopping.abort(); // wakes long-polls; new calls are refused with Connection: close
    const outcome = await Promise.race([inFlight.idle(), sleep(options.graceMs ?? DEFAULT_GRACE_MS)]);
    if (outcome === "timeout")
      logger.warn({ inFlight: inFlight.size }, "grace period over; closing connections");
    server.closeAllConnections();
    await closed;
    if (options.closeBroker !== false) await options.broker.close();
  };
  return {
    url: `http://${urlHost}:${address.port}`,
    host: address.address,
    port: address.port,
    close: () => {
      closing ??= stop();
      return closing;
    },
  };
}
