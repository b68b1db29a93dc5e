import type { Command } from "commander";
import { addBrokerOptions, type BrokerFlags } from "../options.js";
import { okResult } from "../output/original.js";
import { emit, withBroker } from "../run.js";

/** `mqlite delete-queue <name>`: deletes a plain queue with its messages. */
export function registerDeleteQueue(program: Command): void {
  const cmd = program
    .command("delete-queue")
    .summary("delete a queue and its messages")
    .description(
      "delete a plain queue and every message in it (a subscription's queue goes with unsubscribe)",
    )
    .argument("<name>", "queue name");
  addBrokerOptions(cmd).action(async (name: string, flags: BrokerFlags) => {
    await withBroker(flags, (broker) => broker.deleteQueue(name));
    const ok = okResult([
      ["action", "delete-queue"],
      ["queue", name],
    ]);
    await emit(flags, { ...ok, human: () => `deleted queue ${name}`, wire: {} });
  });
}
