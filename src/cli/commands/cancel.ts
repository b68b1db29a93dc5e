import type { Command } from "commander";
import { addBrokerOptions, type BrokerFlags, seqNumber } from "../options.js";
import { okResult } from "../output/original.js";
import { emit, withBroker } from "../run.js";

/** `mqlite cancel <queue> <seq>`: deletes a scheduled message that was never delivered. */
export function registerCancel(program: Command): void {
  const cmd = program
    .command("cancel")
    .description("cancel a scheduled message that was never delivered")
    .argument("<queue>", "queue")
    .argument("<seq>", "sequence number (schedule printed it)");
  addBrokerOptions(cmd).action(async (queue: string, seqText: string, flags: BrokerFlags) => {
    const seq = seqNumber(seqText);
    await withBroker(flags, (broker) => broker.cancel(queue, seq));
    const ok = okResult([
      ["action", "cancel"],
      ["queue", queue],
      ["seq", seq],
    ]);
    await emit(flags, { ...ok, human: () => `cancelled seq ${seq}`, wire: { ok: true } });
  });
}
