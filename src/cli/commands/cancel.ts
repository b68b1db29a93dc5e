import type { Command } from "commander";
import { addBrokerOptions, type BrokerFlags, seqNumber } from "../options.js";
import { emit, withBroker } from "../run.js";

/** `mqlite cancel <queue> <seq>`: deletes a scheduled message that was never delivered. */
export function registerCancel(program: Command): void {
  const cmd = program
    .command("cancel")
    .description("cancel a scheduled message that was never delivered")
    .argument("<queue>", "queue")
    .argument("<seq>", "sequence number (schedule printed it)", seqNumber);
  addBrokerOptions(cmd).action(async (queue: string, seq: number, flags: BrokerFlags) => {
    await withBroker(flags, (broker) => broker.cancel(queue, seq));
    await emit(flags, { ok: true }, () => `cancelled seq ${seq}`);
  });
}
