import { setMaxListeners } from "node:events";
import {
  CancelledError,
  ClosedError,
  InvalidArgumentError,
  MqliteError,
  UnavailableError,
} from "../contract/errors.js";
import {
  errorFromWire,
  type RequestInputOf,
  type ResponseOf,
  ROUTES,
  type RouteName,
  type RpcRoute,
  rpcPath,
} from "../wire/index.js";
import { type Answer, nodePost, type Post } from "./node-post.js";

/**
 * JSON has no NaN or Infinity (`JSON.stringify` would send `null`, which the server reads as
 * "absent"): refuse them here, as the embedded engine refuses them.
 */
function finiteNumbers(key: string, value: unknown): unknown {
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw new InvalidArgumentError(`mqlite: ${key || "value"} must be an integer`);
  }
  return value;
}

/** How the client reaches the server. */
export interface ConnectOptions {
  /** The bearer token, when the server checks tokens. */
  token?: string;
  /**
   * A `fetch` implementation to send every call through (a proxy, a test double). Default: Node's
   * own HTTP client with keep-alive connections.
   */
  fetch?: typeof fetch;
}

/** A POST through a `fetch` implementation. */
function fetchPost(base: string, fetchImpl: typeof fetch): Post {
  return async (path, headers, body, signal) => {
    const res = await fetchImpl(base + path, { method: "POST", headers, body, ...(signal && { signal }) });
    return { status: res.status, text: await res.text() };
  };
}

/** Why a call got no answer: the code of a system error, else the message (and its cause's). */
function reason(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; cause?: unknown } | null;
  if (e?.cause && typeof e.cause === "object") return reason(e.cause);
  if (typeof e?.code === "string") return e.code;
  return String(e?.message ?? err);
}

/**
 * One POST per call to `/mqlite.v1.<Service>/<Method>`, with JSON in and out. An error answer is
 * rethrown as the named error of its wire code; calls in flight are tracked so that `close` can
 * wait for them.
 */
export class Transport {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly post: Post;
  private readonly release: () => void;
  private inFlight = 0;
  private idle: (() => void)[] = [];
  private closed = false;
  /** Aborted by `close`: ends parked long-polls. */
  readonly closing = new AbortController();

  constructor(url: string, options: ConnectOptions = {}) {
    this.base = url.replace(/\/+$/, "");
    this.headers = { "Content-Type": "application/json" };
    if (options.token) this.headers.Authorization = `Bearer ${options.token}`;
    if (options.fetch) {
      this.post = fetchPost(this.base, options.fetch);
      this.release = () => {};
    } else {
      const node = nodePost(this.base);
      this.post = node.post;
      this.release = node.close;
    }
    // Every parked long-poll listens to it: many at once is normal, not a leak.
    setMaxListeners(0, this.closing.signal);
  }

  /** Calls one RPC. `signal` aborts the HTTP request (the caller decides what an abort means). */
  async call<K extends RouteName>(
    name: K,
    body: RequestInputOf<K>,
    signal?: AbortSignal,
  ): Promise<ResponseOf<K>> {
    if (this.closed) throw new ClosedError();
    if (signal?.aborted) throw new CancelledError();
    const payload = JSON.stringify(body ?? {}, finiteNumbers);
    this.inFlight++;
    try {
      let res: Answer;
      try {
        res = await this.post(rpcPath(ROUTES[name] as RpcRoute), this.headers, payload, signal);
      } catch (err) {
        // An abort is the caller's to interpret (its signal says so); anything else is the network.
        if (signal?.aborted || err instanceof MqliteError) throw err;
        throw new UnavailableError(`cannot reach the broker: ${reason(err)} (${this.base})`, { cause: err });
      }
      if (res.status < 200 || res.status > 299) throw errorFromWire(res.status, res.text);
      return JSON.parse(res.text) as ResponseOf<K>;
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) {
        for (const wake of this.idle.splice(0)) wake();
        if (this.closed) this.release();
      }
    }
  }

  /** Refuses new calls, ends parked long-polls, and waits for the calls in flight. */
  close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    if (this.inFlight === 0) {
      this.release();
      return Promise.resolve();
    }
    return new Promise((resolve) => this.idle.push(resolve));
  }
}
