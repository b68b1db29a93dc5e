import type { Hono } from "hono";
import { notReadyFor } from "../contract/readiness.js";
import type { Readiness } from "../contract/types.js";
import { principalResolver, type TokenEntry } from "./access/tokens.js";
import type { ServerEnv, ServerState } from "./env.js";
import { json } from "./respond.js";

/** The readiness of the served broker: a probe that writes nothing. */
async function probe(state: ServerState): Promise<Readiness> {
  if (state.stopping.aborted)
    return { ready: false, reason: "closing", message: "mqlite: the server is stopping" };
  try {
    if (state.broker.readiness) return await state.broker.readiness();
    await state.broker.status();
    return { ready: true };
  } catch (err) {
    const notReady = notReadyFor(err);
    if (notReady) return notReady;
    throw err;
  }
}

/**
 * `GET /readyz`: 200 `{"status":"ready"}` when the broker can take writes, else 503
 * `{"status":"not_ready","reason":"storage_full"|"db_locked"|"db_unavailable"|"closing"}`. Open, as `/healthz` (which
 * stays a bare liveness answer); the `message` with the details only goes to a caller with a valid
 * token, or to anyone when auth is off.
 */
export function registerReadiness(
  app: Hono<ServerEnv>,
  state: ServerState,
  tokens: readonly TokenEntry[],
): void {
  const resolve = tokens.length > 0 ? principalResolver(tokens) : undefined;
  app.all("/readyz", async (c) => {
    const r = await probe(state);
    const details = !resolve || resolve(c.req.header("authorization")) !== undefined;
    const body: Record<string, string> = { status: r.ready ? "ready" : "not_ready" };
    if (r.reason) body.reason = r.reason;
    if (details && r.message) body.message = r.message;
    return json(c, r.ready ? 200 : 503, body);
  });
}
