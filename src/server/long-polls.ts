import { hash } from "node:crypto";
import type { Context } from "hono";
import { ResourceExhaustedError } from "../contract/errors.js";
import type { ServerEnv } from "./env.js";

/** HTTP/1.1 clients wait for one answer before the next request; pipelining long-polls is refused. */
const MAX_LONG_POLLS_PER_CONNECTION = 1;

/** Seconds a refused long-poll is told to wait (`Retry-After`): parked polls end within 20 s, most sooner. */
export const LONG_POLL_RETRY_AFTER_S = 1;

/** A long-poll refused past a cap: 429 `resource_exhausted` with `Retry-After`. */
export class LongPollLimitError extends ResourceExhaustedError {
  readonly retryAfterS = LONG_POLL_RETRY_AFTER_S;
}

/**
 * The long-polls (a wait over 0) parked on one server: at most `max` at once in all, `perClient`
 * per client, and one per connection (Node answers pipelined requests in order but runs them at
 * once). A client is its bearer token (hashed, so the table holds no secret) when auth is on, its
 * remote address otherwise: one client with a thousand connections no longer takes every slot.
 */
export class LongPollSlots {
  parked = 0;
  private readonly byClient = new Map<string, number>();
  private readonly byConnection = new WeakMap<object, number>();

  constructor(
    readonly max: number,
    readonly perClient: number,
    private readonly auth: boolean,
  ) {}

  /** Takes a slot for the request's long-poll, or throws `LongPollLimitError`; `release` gives it back. */
  park(c: Context<ServerEnv>): { release(): void } {
    if (this.parked >= this.max) {
      throw new LongPollLimitError(
        `mqlite: ${this.max} long-polls are parked on this server already; retry later`,
      );
    }
    const client = this.clientOf(c);
    const mine = this.byClient.get(client) ?? 0;
    if (mine >= this.perClient) {
      throw new LongPollLimitError(
        `mqlite: this client has ${this.perClient} long-polls parked already (the per-client cap); retry later`,
      );
    }
    const socket = (c.env as { incoming?: { socket?: object } } | undefined)?.incoming?.socket;
    if (socket) {
      const onSocket = this.byConnection.get(socket) ?? 0;
      if (onSocket >= MAX_LONG_POLLS_PER_CONNECTION) {
        throw new LongPollLimitError(
          "mqlite: this connection has a long-poll parked already (no pipelining)",
        );
      }
      this.byConnection.set(socket, onSocket + 1);
    }
    this.byClient.set(client, mine + 1);
    this.parked++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.parked--;
        const left = (this.byClient.get(client) ?? 1) - 1;
        if (left > 0) this.byClient.set(client, left);
        else this.byClient.delete(client);
        if (socket) this.byConnection.set(socket, (this.byConnection.get(socket) ?? 1) - 1);
      },
    };
  }

  /** Long-polls parked by the client of this request (for tests and metrics). */
  parkedBy(c: Context<ServerEnv>): number {
    return this.byClient.get(this.clientOf(c)) ?? 0;
  }

  private clientOf(c: Context<ServerEnv>): string {
    if (this.auth) {
      const header = c.req.header("authorization") ?? "";
      const token = header.startsWith("Bearer ") ? header.slice("Bearer ".length) : header;
      return `t:${hash("sha256", token, "base64")}`;
    }
    const socket = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming
      ?.socket;
    return `a:${socket?.remoteAddress ?? ""}`;
  }
}
