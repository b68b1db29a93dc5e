import type { Hono } from "hono";
import type { ServerEnv, ServerState } from "../env.js";
import { json } from "../respond.js";

/** `GET /auth/whoami`: what the presented token may do, so a client can adapt (a read-only console). */
export interface WhoAmI {
  /** Whether the server checks tokens. */
  auth: boolean;
  /** The token's id (configured name or hash prefix); null when auth is off. */
  token_id: string | null;
  /** Its scopes as configured; `["manage"]` when auth is off. */
  scopes: string[];
}

export const WHOAMI_PATH = "/auth/whoami";

export function registerWhoAmI(app: Hono<ServerEnv>, state: ServerState): void {
  app.get(WHOAMI_PATH, (c) => {
    const principal = c.get("principal");
    const body: WhoAmI = { auth: state.auth, token_id: principal.id, scopes: [...principal.scopes] };
    return json(c, 200, body, { "Cache-Control": "no-store" });
  });
}
