import type { Broker } from "../../contract/broker.js";
import type { OutgoingMessage } from "../../contract/types.js";
import type { RequestOf, ResponseOf, RouteName } from "../../wire/index.js";
import type { AccessFields } from "../env.js";
import type { ServerMetrics } from "../metrics.js";
import type { Answer } from "../wire-list.js";

/** What an RPC handler gets besides its decoded request. */
export interface RpcContext {
  broker: Broker;
  /** Aborted when the client goes away or a graceful stop begins (long-polls end early). */
  signal: AbortSignal;
  /** Aborted when a graceful stop begins. */
  stopping: AbortSignal;
  /** Whether the server checks tokens (Status reports it). */
  auth: boolean;
  maxMessageBytes: number | undefined;
  metrics: ServerMetrics;
  /** Adds fields to the access-log line. */
  note(fields: AccessFields): void;
  /**
   * Runs `giveBack` if the answer never reaches the client (it went away first, or the write
   * failed): a long-poll that locked messages for a client no longer there returns them at once
   * instead of leaving them locked until their lease lapses.
   */
  ifUndelivered(giveBack: () => void): void;
}

/** A Send's request with its messages in the broker's form (prepared as they are decoded). */
export type PreparedSend = Omit<RequestOf<"send">, "messages"> & { messages?: OutgoingMessage[] | null };

/**
 * The requests whose list the endpoint prepares as it decodes it (see `ListPreparation`): their
 * handler takes the list in the broker's form.
 */
export interface PreparedRequests {
  send: PreparedSend;
  schedule: PreparedSend;
}

/** What a route's handler takes: its decoded request, with its list prepared where it has one. */
export type HandlerRequest<K extends RouteName> = K extends keyof PreparedRequests
  ? PreparedRequests[K]
  : RequestOf<K>;

/** A handler answers its route's response, a list of it possibly as a `WireList`. */
export type Handler<K extends RouteName> = (
  req: HandlerRequest<K>,
  ctx: RpcContext,
) => Promise<Answer<ResponseOf<K>>>;

/** One handler per route of the wire table. */
export type Handlers = { [K in RouteName]: Handler<K> };
