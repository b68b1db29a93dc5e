import type { Broker } from "../contract/broker.js";
import type { Logger } from "../contract/logger.js";
import type { Principal } from "./access/tokens.js";
import type { LargeBodyBudget } from "./large-bodies.js";
import type { LongPollSlots } from "./long-polls.js";

/** What the access log records of one request, filled in by the handler. */
export interface AccessFields {
  rpc?: string;
  queue?: string;
  /** Messages in a Send. */
  n?: number;
  /** Messages in a Receive/Peek answer. */
  msgs?: number;
  seq?: number;
  msg_id?: string;
  /** The error code of an error answer. */
  code?: string;
  /** Log at debug (an empty Receive). */
  quiet?: boolean;
}

/** Hono's per-request variables. */
export interface ServerEnv {
  /**
   * `access`: the access-log record. `cors`: the CORS headers of an RPC answer, which `json()` writes
   * with the answer's own (one plain header object is @hono/node-server's fast path; headers set
   * on the context beforehand make every answer build a `Headers`). `principal`: who is asking
   * (its token id and scopes), set by the gate before any route runs.
   */
  Variables: { access: AccessFields; cors: Readonly<Record<string, string>>; principal: Principal };
}

/** What the middleware and handlers share about the running server. */
export interface ServerState {
  broker: Broker;
  /** The broker as a principal may use it: its scopes checked, administrative changes audited. */
  brokerFor(principal: Principal): Broker;
  logger: Logger;
  version: string;
  /** True when tokens are configured. */
  auth: boolean;
  maxMessageBytes: number | undefined;
  /** Aborted when a graceful stop begins: long-polls answer empty, new calls are refused. */
  stopping: AbortSignal;
  /** The slots of parked long-polls (a wait over 0): in all, per client, per connection. */
  longPolls: LongPollSlots;
  /** The bytes of large request bodies being read and decoded, and the line of those waiting. */
  largeBodies: LargeBodyBudget;
  /**
   * The `Host` headers (name:port) the MCP transport's own DNS-rebinding check accepts, filled in
   * once a loopback server listens; empty: no check (not loopback, or not listening yet).
   */
  mcpAllowedHosts: string[];
}
