import type { Command } from "commander";
import type { BrokerStatus } from "../../contract/types.js";
import { statusToWire } from "../../wire/results.js";
import { addBrokerOptions, type BrokerFlags } from "../options.js";
import { bytes, humanDuration } from "../output/format.js";
import { keyValues } from "../output/table.js";
import { emit, withBroker } from "../run.js";

function statusText(s: BrokerStatus, endpoint: string | undefined): string {
  return keyValues([
    ...(endpoint ? ([["endpoint", endpoint]] as [string, string][]) : []),
    ["version", s.version],
    ["backend", s.backend + (s.remote ? " (remote)" : "")],
    ["location", s.location],
    ["schema", s.schemaVersion],
    ["ping", s.pingMs < 0 ? "failed" : `${s.pingMs} ms`],
    ["db size", bytes(s.dbSizeBytes)],
    ["queues", String(s.queues)],
    ["subscriptions", String(s.subscriptions)],
    ["uptime", humanDuration(Math.round(s.uptimeMs / 1000) * 1000)],
    ["auth", s.auth ? "on" : "off"],
  ]);
}

/** `mqlite status`: what the broker runs on and how it is doing. */
export function registerStatus(program: Command): void {
  const cmd = program
    .command("status")
    .summary("show the broker's status")
    .description("show the broker's version, storage, size, counts, uptime and auth");
  addBrokerOptions(cmd).action(async (flags: BrokerFlags) => {
    const [status, target] = await withBroker(
      flags,
      async (broker, t) => [await broker.status(), t] as const,
    );
    await emit(flags, statusToWire(status), () =>
      statusText(status, target.mode === "remote" ? target.url : undefined),
    );
  });
}
