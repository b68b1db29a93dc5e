import type { Command } from "commander";
import { inChunks } from "../dlq-chunks.js";
import { addBrokerOptions, type BrokerFlags, duration, integer } from "../options.js";
import { emit, withBroker } from "../run.js";

interface RedriveFlags extends BrokerFlags {
  to?: string;
  max: number;
  olderThan: number;
}

/** `mqlite redrive <queue> [--to Q] [--max 0] [--older-than dur]`: dead letters back to active. */
export function registerRedrive(program: Command): void {
  const cmd = program
    .command("redrive")
    .summary("move dead letters back to active")
    .description("move dead letters back to active, in place (delivery count reset) or into another queue")
    .argument("<queue>", "queue whose dead letters move")
    .option("--to <queue>", "move them into this queue instead (fresh seq, enqueued now)")
    .option("--max <n>", "at most this many, oldest first (0 = all)", integer(0), 0)
    .option(
      "--older-than <duration>",
      "only those enqueued longer ago than this, e.g. 1h (0 = any)",
      duration(),
      0,
    )
    .addHelpText(
      "after",
      "\nExamples:\n  mqlite redrive orders\n  mqlite redrive orders --to orders-retry --max 100 --older-than 1h",
    );
  addBrokerOptions(cmd).action(async (queue: string, flags: RedriveFlags) => {
    const moved = await withBroker(flags, (broker) =>
      inChunks(broker, queue, `redriving ${queue}`, flags.max, (max) =>
        broker.redrive(queue, { max, olderThanMs: flags.olderThan, ...(flags.to && { target: flags.to }) }),
      ),
    );
    await emit(flags, { moved }, () => `moved ${moved} dead letter${moved === 1 ? "" : "s"}`);
  });
}
