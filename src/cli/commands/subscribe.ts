import type { Command } from "commander";
import { addBrokerOptions, type BrokerFlags } from "../options.js";
import { okResult } from "../output/original.js";
import { emit, withBroker } from "../run.js";

interface SubscribeFlags extends BrokerFlags {
  expr?: string;
}

/** `mqlite subscribe <topic> <name> [--expr '...']` (alias `create-subscription`). */
export function registerSubscribe(program: Command): void {
  const cmd = program
    .command("subscribe")
    .alias("create-subscription")
    .summary("subscribe a queue <name> to a topic")
    .description("subscribe <name> to <topic>: copies of matching messages go to the queue <name>")
    .argument("<topic>", "topic (any name that is not a queue)")
    .argument("<name>", "subscription, and the name of its backing queue")
    .option("--expr <filter>", "expr filter over the message; absent matches every message")
    .addHelpText(
      "after",
      `\nExample:\n  mqlite subscribe orders eu-orders --expr 'subject_parts[0] == "orders" && properties["region"] == "eu"'`,
    );
  addBrokerOptions(cmd).action(async (topic: string, name: string, flags: SubscribeFlags) => {
    await withBroker(flags, (broker) =>
      broker.subscribe(topic, name, flags.expr ? { filter: flags.expr } : {}),
    );
    const ok = okResult([
      ["action", "subscribe"],
      ["subscription", name],
      ["topic", topic],
    ]);
    await emit(flags, {
      ...ok,
      human: () => `subscribed ${name} to ${topic}${flags.expr ? ` where ${flags.expr}` : ""}`,
      wire: {},
    });
  });
}
