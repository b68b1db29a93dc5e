import { setMaxListeners } from "node:events";
import { CanceledError, ClosedError, InvalidArgumentError } from "../contract/errors.js";
import {
  errorFromWire,
  type RequestInputOf,
  type ResponseOf,
  ROUTES,
  type RouteName,
  type RpcRoute,
  rpcPath,
} from "../wire/index.js";

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
  /** A `fetch` implementation (default: the global one, with keep-alive). */
  fetch?: typeof fetch;
}

/**
 * One POST per call to `/mqlite.v1.<Service>/<Method>`, with JSON in and out. An error answer is
 * rethrown as the named error of its wire code; calls in flight are tracked so that `close` can
 * wait for them.
 */
export class Transport {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly fetch: typeof fetch;
  private inFlight = 0;
  private idle: (() => void)[] = [];
  private closed = false;
  /** Aborted by `close`: ends parked long-polls. */
  readonly closing = new AbortController();

  constructor(url: string, options: ConnectOptions = {}) {
    this.base = url.replace(/\/+$/, "");
    this.headers = { "Content-Type": "application/json" };
    if (options.token) this.headers.Authorization = `Bearer ${options.token}`;
    this.fetch = options.fetch ?? globalThis.fetch;
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
    if (signal?.aborted) throw new CanceledError();
    const payload = JSON.stringify(body ?? {}, finiteNumbers);
    this.inFlight++;
    try {
      const res = await this.fetch(this.base + rpcPath(ROUTES[name] as RpcRoute), {
        method: "POST",
        headers: this.headers,
        body: payload,
        ...(signal && { signal }),
      });
      const text = await res.text();
      if (!res.ok) throw errorFromWire(res.status, text);
      return JSON.parse(text) as ResponseOf<K>;
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) for (const wake of this.idle.splice(0)) wake();
    }
  }

  /** Refuses new calls, ends parked long-polls, and waits for the calls in flight. */
  close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }
}
