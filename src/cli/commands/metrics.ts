import type { Command } from "commander";
import type { QueueStats } from "../../contract/types.js";
import { statsToWire } from "../../wire/results.js";
import { addBrokerOptions, type BrokerFlags } from "../options.js";
import { humanDuration } from "../output/format.js";
import { emit, withBroker } from "../run.js";

/** One line for people: the counts by state, then the age of the oldest waiting message. */
export function statsLine(s: QueueStats): string {
  const parts = [
    `active ${s.active}`,
    `locked ${s.locked}`,
    `deferred ${s.deferred}`,
    `scheduled ${s.scheduled}`,
    `dead-lettered ${s.deadLettered}`,
    ...(s.completed ? [`completed ${s.completed}`] : []),
    ...(s.cancelled ? [`cancelled ${s.cancelled}`] : []),
    `total ${s.total}`,
  ];
  const age = s.oldestMessageAgeMs > 0 ? `, oldest waiting ${humanDuration(s.oldestMessageAgeMs)}` : "";
  return `${s.queue}: ${parts.join(", ")}${age}`;
}

/** `mqlite metrics <queue>`: message counts by state. */
export function registerMetrics(program: Command): void {
  const cmd = program
    .command("metrics")
    .summary("count a queue's messages by state")
    .description("count a queue's messages by state, with the age of the oldest waiting one")
    .argument("<queue>", "queue");
  addBrokerOptions(cmd).action(async (queue: string, flags: BrokerFlags) => {
    const stats = await withBroker(flags, (broker) => broker.stats(queue));
    await emit(flags, {
      text:
        `queue=${stats.queue} active=${stats.active} locked=${stats.locked} deferred=${stats.deferred} ` +
        `scheduled=${stats.scheduled} dead=${stats.deadLettered} total=${stats.total} oldest=${stats.oldestMessageAgeMs}ms`,
      json: {
        queue: stats.queue,
        active: stats.active,
        locked: stats.locked,
        deferred: stats.deferred,
        scheduled: stats.scheduled,
        dead_lettered: stats.deadLettered,
        total: stats.total,
        oldest_message_age_ms: stats.oldestMessageAgeMs,
      },
      human: () => statsLine(stats),
      wire: statsToWire(stats),
    });
  });
}
