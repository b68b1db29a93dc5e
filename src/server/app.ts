import { Hono } from "hono";
import { NotFoundError } from "../contract/errors.js";
import type { Logger } from "../contract/logger.js";
import { openApiJson } from "../wire/index.js";
import { brokersByPrincipal } from "./access/brokers.js";
import { registerWhoAmI } from "./access/whoami.js";
import { resolveCors } from "./cors.js";
import { discoveryCard } from "./discovery.js";
import type { ServerEnv, ServerState } from "./env.js";
import { registerEvents } from "./events.js";
import { gate } from "./gate.js";
import { LargeBodyBudget } from "./large-bodies.js";
import { LongPollSlots } from "./long-polls.js";
import { registerMcpRoute } from "./mcp-route.js";
import { ServerMetrics } from "./metrics.js";
import {
  DEFAULT_LARGE_BODY_WAIT_MS,
  DEFAULT_MAX_LARGE_BODY_BYTES,
  DEFAULT_MAX_LONG_POLLS,
  DEFAULT_MAX_LONG_POLLS_PER_CLIENT,
  type ServerOptions,
} from "./options.js";
import { registerPeriodicRoutes } from "./periodic-route.js";
import { registerReadiness } from "./readiness.js";
import { requestGuard } from "./request-guard.js";
import { errorJson, json } from "./respond.js";
import { registerRpcs } from "./rpc/register.js";
import { registerUi } from "./ui.js";

/** The hono app of a served broker, with what its lifecycle needs. */
export interface ServerApp {
  app: Hono<ServerEnv>;
  metrics: ServerMetrics;
  state: ServerState;
}

/**
 * Builds the HTTP API in the original's middleware order: CORS → access log → (a graceful stop's
 * refusal) → auth, all in one gate (gate.ts) → the route (an RPC: latency observer → POST check →
 * size cap → handler, in one function).
 */
export function createServerApp(
  options: ServerOptions & { logger: Logger; version: string; host?: string },
  stopping: AbortSignal,
): ServerApp {
  const tokens = options.tokens ?? [];
  const auth = tokens.length > 0;
  const cors = resolveCors(options.cors, auth);
  const state: ServerState = {
    broker: options.broker,
    brokerFor: brokersByPrincipal(options.broker, options.logger),
    logger: options.logger,
    version: options.version,
    auth,
    maxMessageBytes: options.maxMessageBytes,
    stopping,
    longPolls: new LongPollSlots(
      options.maxLongPolls ?? DEFAULT_MAX_LONG_POLLS,
      options.maxLongPollsPerClient ?? DEFAULT_MAX_LONG_POLLS_PER_CLIENT,
      auth,
    ),
    largeBodies: new LargeBodyBudget(
      options.maxLargeBodyBytes ?? DEFAULT_MAX_LARGE_BODY_BYTES,
      options.largeBodyWaitMs ?? DEFAULT_LARGE_BODY_WAIT_MS,
      options.largeBodyMinBytesPerSecond,
      options.largeBodyGraceMs,
    ),
    mcpAllowedHosts: [],
  };
  const metrics = new ServerMetrics(options.broker, {
    get parkedLongPolls() {
      return state.longPolls.parked;
    },
    get largeBodyBytes() {
      return state.largeBodies.inUse;
    },
    get largeBodiesWaiting() {
      return state.largeBodies.queued;
    },
  });
  const app = new Hono<ServerEnv>();

  app.use(
    "*",
    gate({
      cors,
      logger: options.logger,
      stopping,
      tokens,
      guard: requestGuard({
        auth,
        cors,
        ...(options.host !== undefined && { bindHost: options.host }),
        ...(options.allowedHosts !== undefined && { allowedHosts: options.allowedHosts }),
      }),
    }),
  );

  registerRpcs(app, state, metrics);
  registerEvents(app, state);
  registerWhoAmI(app, state);
  registerPeriodicRoutes(app, options.periodic, options.logger);
  app.all("/", (c) => json(c, 200, discoveryCard(state.version, state.auth, !!options.ui)));
  app.all("/healthz", (c) => c.text("ok"));
  registerReadiness(app, state, tokens);
  app.all("/metrics", async (c) => {
    try {
      return c.body(await metrics.render(), 200, { "Content-Type": metrics.contentType });
    } catch (err) {
      return c.text(`metrics: ${(err as Error).message}`, 500);
    }
  });
  app.all("/openapi.json", (c) =>
    c.body(openApiJson(state.version), 200, { "Content-Type": "application/json" }),
  );
  registerUi(app, options.ui);
  registerMcpRoute(app, state);

  app.notFound((c) => errorJson(c, new NotFoundError(`no such path: ${c.req.path}`)));
  app.onError((err, c) => errorJson(c, err));
  return { app, metrics, state };
}
