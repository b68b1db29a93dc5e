import type { Context } from "hono";
import { UnauthenticatedError } from "../../contract/errors.js";
import { isOpenPath } from "../auth.js";
import type { ServerEnv } from "../env.js";
import { EVENTS_PATH } from "../events.js";
import { PERIODIC_PATH } from "../periodic-route.js";
import { requireScope } from "./guarded-broker.js";
import type { Need } from "./scopes.js";
import { ANONYMOUS, type Principal, principalResolver, type TokenEntry } from "./tokens.js";

/** Open paths when auth is on: no token was checked, so no scope is held. */
const NOBODY: Principal = Object.freeze({ id: null, scopes: Object.freeze([]), grants: Object.freeze([]) });

const MONITOR: Need = { kind: "monitor" };
const MANAGE: Need = { kind: "manage" };

/**
 * What a path outside the RPCs and /mcp needs (those check each operation: `guardBroker`):
 * `/metrics`, `/openapi.json`, the console's live feed and its periodic-jobs list are `monitor`
 * views; pausing or resuming a periodic job is `manage`.
 */
export function pathNeed(path: string): Need | undefined {
  if (path === "/metrics" || path === "/openapi.json" || path === EVENTS_PATH || path === PERIODIC_PATH)
    return MONITOR;
  return path.startsWith(`${PERIODIC_PATH}/`) ? MANAGE : undefined;
}

/**
 * The auth step of the gate: sets the request's `principal` (full access when auth is off) and
 * returns the error that refuses it (401 without a known token, 403 without the path's scope).
 */
export function authenticator(tokens: readonly TokenEntry[]): (c: Context<ServerEnv>) => Error | undefined {
  const resolve = tokens.length > 0 ? principalResolver(tokens) : undefined;
  return (c) => {
    const path = c.req.path;
    let principal = ANONYMOUS;
    if (resolve) {
      if (isOpenPath(path)) {
        c.set("principal", NOBODY);
        return undefined;
      }
      const found = resolve(c.req.header("authorization"));
      if (!found) return new UnauthenticatedError();
      principal = found;
    }
    c.set("principal", principal);
    const need = pathNeed(path);
    if (!need) return undefined;
    try {
      requireScope(principal, need);
      return undefined;
    } catch (err) {
      return err as Error;
    }
  };
}
