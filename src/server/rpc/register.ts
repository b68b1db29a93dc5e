import type { ServerResponse } from "node:http";
import type { Context, Hono, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { MessageTooLargeError, UnimplementedError } from "../../contract/errors.js";
import {
  decodeRequest,
  decodeRequestSliced,
  type JsonText,
  type ListPreparation,
  prepareList,
  ROUTE_NAMES,
  ROUTES,
  type RouteName,
  type RpcRoute,
  rpcName,
  rpcPath,
  SLICED_DECODE_BYTES,
} from "../../wire/index.js";
import { type RoomedBroker, withAnswerRooms } from "../answer-room.js";
import type { AccessFields, ServerEnv, ServerState } from "../env.js";
import { LargeBodyLimitError } from "../large-bodies.js";
import { LongPollLimitError } from "../long-polls.js";
import type { ServerMetrics } from "../metrics.js";
import { MAX_REQUEST_BYTES } from "../options.js";
import { answerJson, errorJson, note } from "../respond.js";
import { adminHandlers } from "./admin-handlers.js";
import type { Handler, Handlers, RpcContext } from "./context.js";
import { flowHandlers } from "./flow-handlers.js";
import { jobHandlers } from "./job-handlers.js";
import { queueHandlers, queuePreparations } from "./queue-handlers.js";
import { type RequestBody, RequestTooLargeError, readBody, readsStreamedBody } from "./request-body.js";
import { topicHandlers } from "./topic-handlers.js";

const handlers: Handlers = {
  ...queueHandlers,
  ...adminHandlers,
  ...jobHandlers,
  ...topicHandlers,
  ...flowHandlers,
};

/** The routes whose handler takes a list in the broker's form, prepared as it is decoded. */
const preparations: Partial<Record<RouteName, ListPreparation>> = { ...queuePreparations };

/** The routes whose answers list messages (see `withAnswerRooms`). */
const LISTS_MESSAGES: ReadonlySet<RouteName> = new Set([
  "receive",
  "receiveAny",
  "receiveDeferred",
  "peek",
  "readTopic",
  "leaseTopic",
]);

/** Long-polls: they end early when the client goes away or a graceful stop begins. */
const LONG_POLLS: ReadonlySet<RouteName> = new Set(["receive", "receiveAny", "awaitSettled"]);

/**
 * The 413 of a body left unread: the connection closes after it, or a client would send its next
 * request on a connection whose unread bytes the server takes for that request.
 */
const tooLarge = (c: Context<ServerEnv>) =>
  errorJson(c, new MessageTooLargeError(`request body over ${MAX_REQUEST_BYTES} bytes`), {
    Connection: "close",
  });

const streamLimit = bodyLimit({ maxSize: MAX_REQUEST_BYTES, onError: (c) => tooLarge(c as never) });

/**
 * The 32 MiB request cap around `answer`. With a Content-Length (the usual case) the header decides
 * and the body is left to `c.req.text()`'s fast path; a chunked body is counted as it streams in.
 */
async function withinBodyLimit(
  c: Context<ServerEnv>,
  answer: (c: Context<ServerEnv>) => Promise<Response>,
): Promise<Response> {
  const length = declaredLength(c);
  if (length !== undefined) return length > MAX_REQUEST_BYTES ? tooLarge(c) : answer(c);
  // A streamed body `readBody` reads itself is capped there, as it arrives.
  if (readsStreamedBody(c)) return answer(c);
  let answered: Response | undefined;
  const limited = await streamLimit(c, async () => {
    answered = await answer(c);
  });
  return limited ?? answered!;
}

/** The body's length from its Content-Length, when that is what delimits it (not chunked). */
function declaredLength(c: Context<ServerEnv>): number | undefined {
  const length = c.req.header("content-length");
  return length === undefined || c.req.header("transfer-encoding") !== undefined ? undefined : Number(length);
}

/** A signal that aborts with either input; `release` detaches it from both. */
function eitherSignal(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  if (a.aborted || b.aborted) controller.abort();
  a.addEventListener("abort", abort, { once: true });
  b.addEventListener("abort", abort, { once: true });
  return {
    signal: controller.signal,
    release() {
      a.removeEventListener("abort", abort);
      b.removeEventListener("abort", abort);
    },
  };
}

/**
 * Runs `giveBack` once it is known the answer did not reach the client: the request was aborted
 * (the client closed its connection) or the response's connection closed before it was written.
 */
function onUndelivered(c: Context<ServerEnv>, giveBack: () => void): void {
  const res = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  if (c.req.raw.signal.aborted) {
    giveBack();
    return;
  }
  if (!res) return;
  if (res.closed) {
    if (!res.writableFinished) giveBack();
    return;
  }
  res.once("close", () => {
    if (!res.writableFinished) giveBack();
  });
}

/**
 * Decodes a request body (its bytes when large, see `readBody`); a large one in slices, so that
 * other requests are served meanwhile. `prepare`: the list the handler takes in another form.
 */
function decode<S extends NonNullable<RpcRoute["request"]>>(
  schema: S,
  body: JsonText,
  prepare: ListPreparation | undefined,
) {
  return typeof body !== "string" || body.length >= SLICED_DECODE_BYTES
    ? decodeRequestSliced(schema, body, decodeRequest, prepare)
    : prepareList(decodeRequest(schema, body), prepare);
}

/**
 * One RPC route as one function (a hono layer per step costs every request a promise and a
 * closure): name it in the access log, time it, require POST, cap the body, decode, run, answer.
 */
function rpcHandler(
  name: RouteName,
  state: ServerState,
  metrics: ServerMetrics,
): MiddlewareHandler<ServerEnv> {
  const route = ROUTES[name] as RpcRoute;
  const rpc = rpcName(route);
  const observe = metrics.observer(rpc);
  const run = endpoint(name, state, metrics);
  return async (c) => {
    const started = performance.now();
    note(c, { rpc });
    try {
      if (c.req.method !== "POST") return errorJson(c, new UnimplementedError("POST required"));
      return route.request ? await withinBodyLimit(c, run) : await run(c);
    } finally {
      observe((performance.now() - started) / 1000);
    }
  };
}

/**
 * One request's `RpcContext`: a class, so that a request allocates one object and no closures (its
 * methods live on the prototype).
 */
class RpcCall implements RpcContext {
  readonly broker: ServerState["broker"];
  readonly stopping: AbortSignal;
  readonly auth: boolean;
  readonly maxMessageBytes: number | undefined;
  /** What `ifUndelivered` was given, run if the answer does not reach the client. */
  giveBacks: (() => void)[] | undefined;

  constructor(
    private readonly c: Context<ServerEnv>,
    state: ServerState,
    readonly metrics: ServerMetrics,
    readonly signal: AbortSignal,
    broker: ServerState["broker"],
  ) {
    this.broker = broker;
    this.stopping = state.stopping;
    this.auth = state.auth;
    this.maxMessageBytes = state.maxMessageBytes;
  }

  note(fields: AccessFields): void {
    note(this.c, fields);
  }

  ifUndelivered(giveBack: () => void): void {
    this.giveBacks ??= [];
    this.giveBacks.push(giveBack);
  }
}

function endpoint(
  name: RouteName,
  state: ServerState,
  metrics: ServerMetrics,
): (c: Context<ServerEnv>) => Promise<Response> {
  const route = ROUTES[name] as RpcRoute;
  const handle = handlers[name] as Handler<RouteName>;
  const wantsSignal = LONG_POLLS.has(name);
  const prepare = preparations[name];
  const lists = LISTS_MESSAGES.has(name);
  return async (c) => {
    let body: RequestBody | undefined;
    try {
      // ListQueues, ListSubscriptions and Status never read the body, as the original.
      body = route.request ? await readBody(c, declaredLength(c), state.largeBodies) : undefined;
      const req = route.request ? await decode(route.request, body!.text, prepare) : undefined;
      // The request is decoded: its bytes (32 MB at most) can go while it runs and is answered.
      if (body) body.text = "";
      // A long-poll that will park holds a connection and a waiter: there is a cap on them.
      const parks = wantsSignal && ((req as { wait_time_ms?: number | null }).wait_time_ms ?? 0) > 0;
      const slot = parks ? state.longPolls.park(c) : undefined;
      const linked = wantsSignal ? eitherSignal(c.req.raw.signal, state.stopping) : undefined;
      const broker = state.brokerFor(c.get("principal"));
      // An answer that lists messages takes its room in the large-body budget.
      const rooms: RoomedBroker | undefined = lists ? withAnswerRooms(broker, state.largeBodies) : undefined;
      const call = new RpcCall(c, state, metrics, linked?.signal ?? state.stopping, rooms?.broker ?? broker);
      try {
        const answer = answerJson(c, await handle(req as never, call));
        const giveBacks = call.giveBacks;
        if (giveBacks) {
          onUndelivered(c, () => {
            for (const giveBack of giveBacks) giveBack();
          });
        }
        return answer;
      } finally {
        linked?.release();
        slot?.release();
        rooms?.releaseAfter(c);
      }
    } catch (err) {
      return errorJson(c, err, refusalHeaders(err));
    } finally {
      body?.release();
    }
  };
}

/**
 * The headers of a refusal: when to retry one refused for want of room, and a close where the
 * body was left unread (the client's next request would start in its bytes).
 */
function refusalHeaders(err: unknown): Record<string, string> | undefined {
  if (err instanceof LongPollLimitError) return { "Retry-After": `${err.retryAfterS}` };
  if (err instanceof LargeBodyLimitError) return { "Retry-After": `${err.retryAfterS}`, Connection: "close" };
  if (err instanceof RequestTooLargeError) return { Connection: "close" };
  return undefined;
}

/** Registers every RPC of the wire table, in its order (each: observer → POST check → size cap → handler). */
export function registerRpcs(app: Hono<ServerEnv>, state: ServerState, metrics: ServerMetrics): void {
  for (const name of ROUTE_NAMES) {
    app.all(rpcPath(ROUTES[name] as RpcRoute), rpcHandler(name, state, metrics));
  }
}
