import type { Broker } from "../contract/broker.js";
import { type OpenedBroker, openTarget } from "./connect/open.js";
import { type ConnectionFlags, resolveTarget, type Target } from "./connect/target.js";
import type { BrokerFlags } from "./options.js";
import { printJson, printText } from "./output/write.js";

/** Opens the broker the flags and environment name, runs `fn`, and closes it whatever happens. */
export async function withBroker<T>(
  flags: ConnectionFlags,
  fn: (broker: Broker, target: Target) => Promise<T>,
): Promise<T> {
  const opened: OpenedBroker = await openTarget(resolveTarget(flags, process.env));
  try {
    return await fn(opened.broker, opened.target);
  } finally {
    await opened.close();
  }
}

/** Prints a result: its wire-named JSON with `--output json`, else the text for people. */
export function emit(flags: BrokerFlags, json: unknown, text: () => string): Promise<void> {
  return flags.output === "json" ? printJson(json) : printText(text());
}
