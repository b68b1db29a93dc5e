import type { Command } from "commander";
import { dlqBounds } from "../dlq-bounds.js";
import { inChunks } from "../dlq-chunks.js";
import { addBrokerOptions, type BrokerFlags, duration, integer } from "../options.js";
import { okResult } from "../output/original.js";
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
    .option("--max <n>", "at most this many, oldest first (0 = all)", integer(), 0)
    .option(
      "--older-than <duration>",
      "only those enqueued longer ago than this, e.g. 1h (0 = any)",
      duration(true),
      0,
    )
    .addHelpText(
      "after",
      "\nExamples:\n  mqlite redrive orders\n  mqlite redrive orders --to orders-retry --max 100 --older-than 1h",
    );
  addBrokerOptions(cmd).action(async (queue: string, flags: RedriveFlags) => {
    const { max, olderThanMs } = dlqBounds(flags.max, flags.olderThan);
    const moved = await withBroker(flags, (broker) =>
      inChunks(broker, queue, `redriving ${queue}`, max, (n) =>
        broker.redrive(queue, { max: n, olderThanMs, ...(flags.to && { target: flags.to }) }),
      ),
    );
    const ok = okResult([
      ["action", "redrive"],
      ["moved", moved],
    ]);
    await emit(flags, {
      ...ok,
      human: () => `moved ${moved} dead letter${moved === 1 ? "" : "s"}`,
      wire: { moved },
    });
  });
}
