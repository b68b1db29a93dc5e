import { ROUTES, type RpcRoute, rpcPath } from "../wire/index.js";

/** The discovery card of `GET /` (spec §1.5): exactly these fields, `ui` only with the console on. */
export interface DiscoveryCard {
  name: "mqlite";
  description: string;
  version: string;
  status: "ok";
  auth: "bearer" | "none";
  docs: string;
  endpoints: string[];
  health: "/healthz";
  metrics: "/metrics";
  ui?: "/ui";
}

export function discoveryCard(version: string, auth: boolean, ui: boolean): DiscoveryCard {
  return {
    name: "mqlite",
    description: "Lightweight SQLite-backed message queue with Azure Service Bus-style semantics.",
    version: version || "dev",
    status: "ok",
    auth: auth ? "bearer" : "none",
    docs: "https://github.com/mqlitehq/mqlite",
    endpoints: (Object.values(ROUTES) as RpcRoute[]).map(rpcPath),
    health: "/healthz",
    metrics: "/metrics",
    ...(ui && { ui: "/ui" as const }),
  };
}
