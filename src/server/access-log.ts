import type { MiddlewareHandler } from "hono";
import type { Logger } from "../engine/logger.js";
import type { ServerEnv } from "./env.js";

/**
 * One structured line per request once it is answered: the RPC (or path), status, what the
 * handler noted (queue, n/msgs/seq/msg_id, code) and `dur` in ms. The level follows the status:
 * 5xx error, 4xx warn, else info; an empty Receive is logged at debug.
 */
export function accessLog(logger: Logger): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const started = performance.now();
    c.set("access", {});
    await next();
    const status = c.res.status;
    const { quiet, rpc, ...fields } = c.get("access");
    const line = {
      ...(rpc ? { rpc } : { method: c.req.method, path: c.req.path }),
      status,
      ...fields,
      dur: Math.round((performance.now() - started) * 1000) / 1000,
    };
    if (status >= 500) logger.error(line, "request");
    else if (status >= 400) logger.warn(line, "request");
    else if (quiet) logger.debug(line, "request");
    else logger.info(line, "request");
  };
}
