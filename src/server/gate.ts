import type { Context, MiddlewareHandler } from "hono";
import { ClosedError } from "../contract/errors.js";
import type { Logger } from "../contract/logger.js";
import { authenticator } from "./access/authenticate.js";
import type { TokenEntry } from "./access/tokens.js";
import { writeAccessLog } from "./access-log.js";
import { corsApplier } from "./cors.js";
import type { ServerEnv } from "./env.js";
import { errorJson } from "./respond.js";

export interface GateOptions {
  /** The CORS origin, or false for none. */
  cors: string | false;
  logger: Logger;
  /** Aborted when a graceful stop begins: new calls are refused. */
  stopping: AbortSignal;
  /** Bearer tokens, with their scopes; none turns auth off. */
  tokens: readonly TokenEntry[];
  /** Refusals checked before auth (request-guard.ts): a foreign Host or Origin, a non-JSON RPC. */
  guard?: (c: Context<ServerEnv>) => Error | undefined;
}

/**
 * What every request passes before its route, in the original's order: CORS (a preflight is
 * answered here), the access log, the graceful stop's refusal (`Connection: close`), bearer auth
 * (open paths excepted) setting the request's `principal`, and the scope of a path that needs
 * one. One layer rather than four: each hono layer costs every request a promise and a closure.
 */
export function gate(options: GateOptions): MiddlewareHandler<ServerEnv> {
  const cors = options.cors ? corsApplier(options.cors) : undefined;
  const authenticate = authenticator(options.tokens);
  const { guard, logger, stopping } = options;
  return async (c, next) => {
    const preflight = cors?.(c);
    if (preflight) return preflight;
    const started = performance.now();
    c.set("access", {});
    let refusal: Response | undefined;
    const guarded = guard?.(c);
    // `/readyz` answers `closing` itself.
    if (stopping.aborted && c.req.path !== "/readyz") {
      refusal = errorJson(c, new ClosedError("mqlite: the server is stopping"), { Connection: "close" });
    } else if (guarded) {
      refusal = errorJson(c, guarded);
    } else {
      const failure = authenticate(c);
      if (failure) refusal = errorJson(c, failure);
    }
    if (refusal) {
      writeAccessLog(logger, c, refusal.status, started);
      return refusal;
    }
    await next();
    writeAccessLog(logger, c, c.res.status, started);
  };
}
