/**
 * The remote client: the `Broker` contract over a served broker's HTTP API.
 * @module
 */
import type { Broker } from "../contract/broker.js";
import { RemoteBroker } from "./remote-broker.js";
import type { ConnectOptions } from "./transport.js";

export { RemoteBroker } from "./remote-broker.js";
export type { ConnectOptions } from "./transport.js";

/**
 * Connects to a served broker. Nothing is sent until the first call.
 *
 * ```ts
 * const broker = connect("http://127.0.0.1:6754", { token: process.env.MQLITE_TOKEN });
 * await broker.send("orders", { body: "hello" });
 * ```
 */
export function connect(url: string, options: ConnectOptions = {}): Broker {
  return new RemoteBroker(url, options);
}
