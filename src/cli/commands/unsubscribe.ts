import type { Command } from "commander";
import { addBrokerOptions, type BrokerFlags } from "../options.js";
import { okResult } from "../output/original.js";
import { emit, withBroker } from "../run.js";

/** `mqlite unsubscribe <topic> <name>`: removes a subscription and its backing queue. */
export function registerUnsubscribe(program: Command): void {
  const cmd = program
    .command("unsubscribe")
    .summary("remove a subscription and its queue")
    .description("remove a subscription, with its backing queue and the messages in it")
    .argument("<topic>", "topic")
    .argument("<name>", "subscription");
  addBrokerOptions(cmd).action(async (topic: string, name: string, flags: BrokerFlags) => {
    await withBroker(flags, (broker) => broker.unsubscribe(topic, name));
    const ok = okResult([
      ["action", "unsubscribe"],
      ["subscription", name],
      ["topic", topic],
    ]);
    await emit(flags, { ...ok, human: () => `unsubscribed ${name} from ${topic}`, wire: {} });
  });
}
