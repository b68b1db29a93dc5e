/**
 * The served broker: MQLite's HTTP wire contract over any `Broker`, with bearer auth, CORS,
 * metrics, the discovery card, /openapi.json and the console's static files.
 * @module
 */
export type { Scope } from "./access/scopes.js";
export {
  type Principal,
  parseTokenEntry,
  principalResolver,
  type TokenEntry,
  type TokenSpec,
} from "./access/tokens.js";
export { WHOAMI_PATH, type WhoAmI } from "./access/whoami.js";
export { createServerApp, type ServerApp } from "./app.js";
export { isOpenPath, tokenChecker } from "./auth.js";
export { type DiscoveryCard, discoveryCard } from "./discovery.js";
export { RPC_BUCKETS, ServerMetrics } from "./metrics.js";
export {
  DEFAULT_GRACE_MS,
  DEFAULT_PORT,
  type ListenOptions,
  MAX_REQUEST_BYTES,
  type RunningServer,
  type ServerOptions,
  type StartServerOptions,
} from "./options.js";
export type { PeriodicControl, PeriodicEntry } from "./periodic-route.js";
export { startServer } from "./start.js";
export { defaultConsoleDir, type UiOptions } from "./ui.js";
export { CONSOLE_CSP, CONSOLE_SECURITY_HEADERS } from "./ui-headers.js";
