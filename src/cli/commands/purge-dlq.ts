import type { Command } from "commander";
import { dlqBounds } from "../dlq-bounds.js";
import { inChunks } from "../dlq-chunks.js";
import { UsageError } from "../errors.js";
import { addBrokerOptions, type BrokerFlags, duration, integer } from "../options.js";
import { okResult } from "../output/original.js";
import { emit, withBroker } from "../run.js";

interface PurgeFlags extends BrokerFlags {
  max?: number;
  olderThan?: number;
  all?: boolean;
}

/** A purge deletes for good: the whole DLQ only when asked in so many words (the original's checks, in its order). */
function bounds(f: PurgeFlags): { max: number; olderThanMs: number } {
  const { max, olderThanMs } = dlqBounds(f.max ?? 0, f.olderThan ?? 0);
  if (max === 0 && olderThanMs === 0 && !f.all)
    throw new UsageError(
      "refusing to purge the entire DLQ without a bound — pass --max/--older-than, or --all to delete everything",
    );
  if (f.all && (f.max !== undefined || f.olderThan !== undefined))
    throw new UsageError(
      "--all deletes the entire DLQ and cannot be combined with --max/--older-than — pass one or the other",
    );
  return { max, olderThanMs };
}

/** `mqlite purge-dlq <queue> (--max N | --older-than D | --all)`: deletes dead letters. */
export function registerPurgeDlq(program: Command): void {
  const cmd = program
    .command("purge-dlq")
    .summary("delete dead letters for good")
    .description("delete dead letters for good, oldest first (bounded, or --all)")
    .argument("<queue>", "queue whose dead letters go")
    .option("--max <n>", "at most this many, oldest first", integer())
    .option(
      "--older-than <duration>",
      "only those enqueued longer ago than this (at least 1ms)",
      duration(true),
    )
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
    const ok = okResult([
      ["action", "purge-dlq"],
      ["purged", purged],
    ]);
    await emit(flags, {
      ...ok,
      human: () => `purged ${purged} dead letter${purged === 1 ? "" : "s"}`,
      wire: { purged },
    });
  });
}
