import type { Command } from "commander";
import type { OrderingMode, QueueConfig } from "../../contract/types.js";
import { addBrokerOptions, type BrokerFlags, duration, integer } from "../options.js";
import { okResult } from "../output/original.js";
import { emit, withBroker } from "../run.js";

interface CreateQueueFlags extends BrokerFlags {
  lock?: number;
  maxDelivery?: number;
  ttl?: number;
  dedup?: number;
  ordering?: OrderingMode;
  discardExpired?: boolean;
  dlqMaxAge?: number;
  dlqMaxCount?: number;
  dlqMaxBytes?: number;
}

function config(f: CreateQueueFlags): QueueConfig {
  const c: QueueConfig = {};
  if (f.lock !== undefined) c.lockDurationMs = Math.trunc(f.lock);
  if (f.maxDelivery !== undefined) c.maxDeliveryCount = f.maxDelivery;
  if (f.ttl !== undefined) c.defaultTtlMs = Math.trunc(f.ttl);
  if (f.dedup !== undefined) c.dedupWindowMs = Math.trunc(f.dedup);
  if (f.ordering) c.orderingMode = f.ordering;
  if (f.discardExpired) c.deadLetterOnExpire = false;
  if (f.dlqMaxAge !== undefined) c.dlqMaxAgeMs = Math.trunc(f.dlqMaxAge);
  if (f.dlqMaxCount !== undefined) c.dlqMaxCount = f.dlqMaxCount;
  if (f.dlqMaxBytes !== undefined) c.dlqMaxBytes = f.dlqMaxBytes;
  return c;
}

/** `mqlite create-queue <name>`: creates a queue, or replaces the whole config of an existing one. */
export function registerCreateQueue(program: Command): void {
  const cmd = program
    .command("create-queue")
    .summary("create a queue or replace its config")
    .description(
      "create a queue, or replace an existing queue's whole config (omitted flags revert to defaults)",
    )
    .argument("<name>", "queue name")
    .option("--lock <duration>", "peek-lock lease, e.g. 30s (0 → 30s)", duration())
    .option("--max-delivery <n>", "dead-letter after this many deliveries (0 → 10)", integer(0))
    .option(
      "--ttl <duration>",
      "default time to live, also a ceiling on a message's own (0 = none)",
      duration(),
    )
    .option(
      "--dedup <duration>",
      "duplicate-detection window by message id or body hash (0 = off)",
      duration(),
    )
    .option("--ordering <mode>", "delivery order: standard, group_fifo or strict_fifo (the broker checks it)")
    .option("--discard-expired", "delete messages whose TTL lapses instead of dead-lettering them")
    .option(
      "--dlq-max-age <duration>",
      "keep dead letters this long (0 inherit, negative = unbounded)",
      duration(true),
    )
    .option(
      "--dlq-max-count <n>",
      "keep at most this many dead letters (0 inherit, -1 unbounded)",
      integer(-1),
    )
    .option("--dlq-max-bytes <n>", "cap on dead-letter body bytes (0 inherit, -1 unbounded)", integer(-1))
    .addHelpText(
      "after",
      "\nExample:\n  mqlite create-queue orders --lock 1m --max-delivery 5 --ordering group_fifo",
    );
  addBrokerOptions(cmd).action(async (name: string, flags: CreateQueueFlags) => {
    await withBroker(flags, (broker) => broker.createQueue(name, config(flags)));
    const ok = okResult([
      ["action", "create-queue"],
      ["queue", name],
    ]);
    await emit(flags, { ...ok, human: () => `created queue ${name}`, wire: {} });
  });
}
