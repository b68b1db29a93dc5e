import type { Command } from "commander";
import type { QueueInfo } from "../../contract/types.js";
import { queueInfoToWire } from "../../wire/queue-config.js";
import { addBrokerOptions, type BrokerFlags } from "../options.js";
import { humanDuration } from "../output/format.js";
import { padRight } from "../output/go.js";
import { table } from "../output/table.js";
import { emit, withBroker } from "../run.js";

function dlqBound(n: number, format: (n: number) => string): string {
  return n === 0 ? "default" : n < 0 ? "none" : format(n);
}

function queuesTable(queues: QueueInfo[]): string {
  return table(
    ["NAME", "KIND", "ORDERING", "LOCK", "MAX_DELIVERY", "TTL", "DEDUP", "DLQ_AGE", "DLQ_COUNT"],
    queues.map((q) => [
      q.paused ? `${q.name} (paused)` : q.name,
      q.kind,
      q.orderingMode,
      humanDuration(q.lockDurationMs),
      String(q.maxDeliveryCount),
      humanDuration(q.defaultTtlMs),
      humanDuration(q.dedupWindowMs),
      dlqBound(q.dlqMaxAgeMs, humanDuration),
      dlqBound(q.dlqMaxCount, String),
    ]),
    new Set([4]),
  );
}

/** `mqlite list`: every queue with its config. */
export function registerList(program: Command): void {
  const cmd = program
    .command("list")
    .summary("list queues with their config")
    .description("list every queue (subscription backing queues included) with its config");
  addBrokerOptions(cmd).action(async (flags: BrokerFlags) => {
    const queues = await withBroker(flags, (broker) => broker.listQueues());
    await emit(flags, {
      text:
        queues.length === 0
          ? "(no queues)"
          : queues
              .map(
                (q) =>
                  `${padRight(q.name, 24)} kind=${padRight(q.kind, 12)} lock=${q.lockDurationMs}ms ` +
                  `maxdc=${q.maxDeliveryCount} ttl=${q.defaultTtlMs}ms dedup=${q.dedupWindowMs}ms`,
              )
              .join("\n"),
      json: queues.map((q) => ({
        name: q.name,
        kind: q.kind,
        lock_duration_ms: q.lockDurationMs,
        max_delivery_count: q.maxDeliveryCount,
        default_ttl_ms: q.defaultTtlMs,
        dedup_window_ms: q.dedupWindowMs,
      })),
      human: () => (queues.length === 0 ? "no queues" : queuesTable(queues)),
      wire: { queues: queues.map(queueInfoToWire) },
    });
  });
}
