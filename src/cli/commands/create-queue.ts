import { type Command, Option } from "commander";
import type { OrderingMode, QueueConfig } from "../../contract/types.js";
import { addBrokerOptions, type BrokerFlags, duration, integer } from "../options.js";
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
  if (f.lock !== undefined) c.lockDurationMs = f.lock;
  if (f.maxDelivery !== undefined) c.maxDeliveryCount = f.maxDelivery;
  if (f.ttl !== undefined) c.defaultTtlMs = f.ttl;
  if (f.dedup !== undefined) c.dedupWindowMs = f.dedup;
  if (f.ordering !== undefined) c.orderingMode = f.ordering;
  if (f.discardExpired) c.deadLetterOnExpire = false;
  if (f.dlqMaxAge !== undefined) c.dlqMaxAgeMs = f.dlqMaxAge;
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
    .addOption(
      new Option("--ordering <mode>", "delivery order").choices(["standard", "group_fifo", "strict_fifo"]),
    )
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
    await emit(flags, {}, () => `created queue ${name}`);
  });
}
