import type { Context } from "hono";
import type { Logger } from "../contract/logger.js";
import type { ServerEnv } from "./env.js";

/**
 * One structured line per request once it is answered: the RPC (or path), status, what the
 * handler noted (queue, n/msgs/seq/msg_id, code) and `dur` in ms. The level follows the status:
 * 5xx error, 4xx warn, else info; an empty Receive is logged at debug. `startedMs` is the
 * request's `performance.now()` when it came in.
 */
export function writeAccessLog(
  logger: Logger,
  c: Context<ServerEnv>,
  status: number,
  startedMs: number,
): void {
  const access = c.get("access");
  const level = status >= 500 ? "error" : status >= 400 ? "warn" : access.quiet ? "debug" : "info";
  // A line nobody writes is not built (the default logger drops info and debug).
  if (logger.isLevelEnabled && !logger.isLevelEnabled(level)) return;
  const { quiet: _, rpc, ...fields } = access;
  const line = {
    ...(rpc ? { rpc } : { method: c.req.method, path: c.req.path }),
    status,
    ...fields,
    dur: Math.round((performance.now() - startedMs) * 1000) / 1000,
  };
  logger[level](line, "request");
}
