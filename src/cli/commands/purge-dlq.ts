import type { Command } from "commander";
import { inChunks } from "../dlq-chunks.js";
import { UsageError } from "../errors.js";
import { addBrokerOptions, type BrokerFlags, duration, integer } from "../options.js";
import { emit, withBroker } from "../run.js";

interface PurgeFlags extends BrokerFlags {
  max?: number;
  olderThan?: number;
  all?: boolean;
}

/** A purge deletes for good: the whole DLQ only when asked in so many words. */
function bounds(f: PurgeFlags): { max: number; olderThanMs: number } {
  const bounded = f.max !== undefined || f.olderThan !== undefined;
  if (f.all && bounded) throw new UsageError("--all purges every dead letter: drop --max and --older-than");
  if (!f.all && !bounded)
    throw new UsageError("purge-dlq needs --max, --older-than, or --all for the whole DLQ");
  if (f.olderThan !== undefined && f.olderThan < 1) throw new UsageError("--older-than must be at least 1ms");
  return { max: f.max ?? 0, olderThanMs: f.olderThan ?? 0 };
}

/** `mqlite purge-dlq <queue> (--max N | --older-than D | --all)`: deletes dead letters. */
export function registerPurgeDlq(program: Command): void {
  const cmd = program
    .command("purge-dlq")
    .summary("delete dead letters for good")
    .description("delete dead letters for good, oldest first (bounded, or --all)")
    .argument("<queue>", "queue whose dead letters go")
    .option("--max <n>", "at most this many, oldest first", integer(1))
    .option("--older-than <duration>", "only those enqueued longer ago than this (at least 1ms)", duration())
    .option("--all", "every dead letter of the queue")
    .addHelpText(
      "after",
      "\nExamples:\n  mqlite purge-dlq orders --older-than 72h\n  mqlite purge-dlq orders --all",
    );
  addBrokerOptions(cmd).action(async (queue: string, flags: PurgeFlags) => {
    const { max, olderThanMs } = bounds(flags);
    const purged = await withBroker(flags, (broker) =>
      inChunks(broker, queue, `purging ${queue}`, max, (n) => broker.purge(queue, { max: n, olderThanMs })),
    );
    await emit(flags, { purged }, () => `purged ${purged} dead letter${purged === 1 ? "" : "s"}`);
  });
}
