import type { Broker } from "../../contract/broker.js";
import { EnvReader } from "../env.js";
import type { Target } from "./target.js";

/** A broker opened for one command, and what closing it takes. */
export interface OpenedBroker {
  broker: Broker;
  target: Target;
  close(): Promise<void>;
}

/**
 * Opens the target. Modules load on demand, so a client-mode command never pays for the engine
 * and an embedded one never for the HTTP client.
 *
 * Embedded, one maintenance pass runs first (due schedules activate, lapsed locks and TTLs are
 * settled), so a command sees the queue as a running broker would; the background loops then run
 * for as long as the command does (a long-poll, the MCP server).
 */
export async function openTarget(target: Target): Promise<OpenedBroker> {
  if (target.mode === "remote") {
    const { connect } = await import("../../client/index.js");
    const broker = connect(target.url, target.token ? { token: target.token } : {});
    return { broker, target, close: () => broker.close() };
  }
  const { openBroker } = await import("../../open.js");
  // As the original, the engine settings of the environment apply here too (bad values warn).
  const env = new EnvReader(process.env);
  const synchronous = env.synchronous();
  const maxMessageBytes = env.maxMessageBytes();
  for (const line of env.warnings) process.stderr.write(`${line}\n`);
  const broker = await openBroker(target.db, {
    synchronous,
    ...(maxMessageBytes !== undefined && { maxMessageBytes }),
  });
  try {
    await broker.runMaintenanceOnce();
  } catch (err) {
    await broker.close();
    throw err;
  }
  return { broker, target, close: () => broker.close() };
}
