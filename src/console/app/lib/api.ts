import type { RequestInputOf, ResponseOf, RouteName } from "../../../wire/routes.js";

/** The RPCs the console calls, by route name. */
const PATHS = {
  send: "QueueService/Send",
  receive: "QueueService/Receive",
  complete: "QueueService/Complete",
  abandon: "QueueService/Abandon",
  reject: "QueueService/Reject",
  defer: "QueueService/Defer",
  receiveDeferred: "QueueService/ReceiveDeferred",
  cancel: "QueueService/Cancel",
  peek: "QueueService/Peek",
  stats: "QueueService/Stats",
  createQueue: "AdminService/CreateQueue",
  deleteQueue: "AdminService/DeleteQueue",
  subscribe: "AdminService/Subscribe",
  unsubscribe: "AdminService/Unsubscribe",
  pauseSubscription: "AdminService/PauseSubscription",
  resumeSubscription: "AdminService/ResumeSubscription",
  listQueues: "AdminService/ListQueues",
  listSubscriptions: "AdminService/ListSubscriptions",
  testFilter: "AdminService/TestFilter",
  redrive: "AdminService/Redrive",
  purge: "AdminService/Purge",
  status: "AdminService/Status",
  pauseQueue: "JobService/PauseQueue",
  resumeQueue: "JobService/ResumeQueue",
  cancelMessage: "JobService/CancelMessage",
  getMessages: "JobService/GetMessages",
  deleteSettled: "JobService/DeleteSettled",
  browse: "JobService/Browse",
  messageErrors: "JobService/MessageErrors",
  messageLog: "JobService/MessageLog",
  listWorkers: "JobService/ListWorkers",
  topicStats: "TopicService/TopicStats",
  topicLogStats: "TopicService/TopicLogStats",
  listDeclaredTopics: "TopicService/ListDeclaredTopics",
} as const satisfies Partial<Record<RouteName, string>>;

export type ApiRoute = keyof typeof PATHS;
/** What a route takes: its request, or nothing for the routes that ignore the body. */
export type ApiRequest<K extends ApiRoute> =
  RequestInputOf<K> extends undefined ? undefined : RequestInputOf<K>;

/** An error answer of the broker (`{code, message}`), or a failure to reach it. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** Where the console is signed in. */
export interface Session {
  /** The broker's base URL, without a trailing slash. */
  url: string;
  /** The Bearer token; empty when the broker has auth off. */
  token: string;
}

export function authHeaders(session: Session): Record<string, string> {
  return session.token ? { Authorization: `Bearer ${session.token}` } : {};
}

/** Calls one RPC: `POST <url>/mqlite.v1.<Service>/<Method>` with the token. */
export function call<K extends ApiRoute>(
  session: Session,
  route: K,
  ...args: ApiRequest<K> extends undefined ? [] : [ApiRequest<K>]
): Promise<ResponseOf<K>> {
  return request(session, "POST", `/mqlite.v1.${PATHS[route]}`, args[0] ?? {}) as Promise<ResponseOf<K>>;
}

/** `GET <url><path>` with the token (the console's own `/ui-api` routes). */
export function getJson<T>(session: Session, path: string): Promise<T> {
  return request(session, "GET", path) as Promise<T>;
}

/** `POST <url><path>` with a JSON body and the token. */
export function postJson<T>(session: Session, path: string, body: unknown): Promise<T> {
  return request(session, "POST", path, body) as Promise<T>;
}

async function request(session: Session, method: string, path: string, body?: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${session.url}${path}`, {
      method,
      headers: {
        ...(body !== undefined && { "Content-Type": "application/json" }),
        ...authHeaders(session),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      cache: "no-store",
    });
  } catch (err) {
    throw new ApiError(
      `cannot reach ${session.url} (${(err as Error).message}); is it running, and does it allow this origin (MQLITE_CORS)?`,
      "unavailable",
      0,
    );
  }
  const text = await res.text();
  if (!res.ok) {
    let code = "internal";
    let message = `HTTP ${res.status}`;
    try {
      const parsed = JSON.parse(text) as { code?: string; message?: string };
      code = parsed.code ?? code;
      message = parsed.message ?? message;
    } catch {
      // not JSON
    }
    throw new ApiError(message, code, res.status);
  }
  return JSON.parse(text) as unknown;
}

/** A bound client: `api.call("stats", { queue })`. */
export class Api {
  constructor(readonly session: Session) {}

  call<K extends ApiRoute>(
    route: K,
    ...args: ApiRequest<K> extends undefined ? [] : [ApiRequest<K>]
  ): Promise<ResponseOf<K>> {
    return call(this.session, route, ...args);
  }
}
