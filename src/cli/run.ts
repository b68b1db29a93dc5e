import type { Broker } from "../contract/broker.js";
import { type OpenedBroker, openTarget } from "./connect/open.js";
import { type ConnectionFlags, resolveTarget, type Target } from "./connect/target.js";
import type { BrokerFlags } from "./options.js";
import { goJson } from "./output/go.js";
import { printJson, printText, writeStdout } from "./output/write.js";

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

/** JSON text already laid out (the original's `receive` array has its own empty form). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** A command's result in each output format. */
export interface Output {
  /** `--output text` (the default): the original's line(s). */
  text: string;
  /** `--output json`: the original's JSON value (Go's escaping and layout), or raw JSON text. */
  json: unknown;
  /** `--output human`: aligned tables and sentences; the text form when absent. */
  human?: () => string;
  /** `--output wire`: the HTTP API's answer for the RPC, under its wire names; the JSON form when absent. */
  wire?: unknown;
}

/** Prints a result in the format `--output` asks for. */
export function emit(flags: BrokerFlags, out: Output): Promise<void> {
  switch (flags.output) {
    case "json":
      return writeStdout(out.json instanceof RawJson ? out.json.text : goJson(out.json));
    case "human":
      return printText(out.human ? out.human() : out.text);
    case "wire":
      return out.wire === undefined ? writeStdout(goJson(out.json)) : printJson(out.wire);
    default:
      return printText(out.text);
  }
}
