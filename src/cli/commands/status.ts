import type { Command } from "commander";
import type { BrokerStatus } from "../../contract/types.js";
import { statusToWire } from "../../wire/results.js";
import { addBrokerOptions, type BrokerFlags } from "../options.js";
import { bytes, humanDuration } from "../output/format.js";
import { goSeconds } from "../output/go.js";
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

/** The original's block: labels aligned so values start at column 16. */
function originalText(s: BrokerStatus): string {
  const lines: [string, string][] = [];
  if (s.version) lines.push(["version", s.version]);
  lines.push(["backend", s.backend], ["location", s.location], ["schema", s.schemaVersion]);
  lines.push(["ping", `${Math.round(s.pingMs)} ms`]);
  if (!s.remote) lines.push(["size", `${s.dbSizeBytes} bytes`]);
  lines.push(["queues", String(s.queues)], ["subscriptions", String(s.subscriptions)]);
  if (s.uptimeMs > 0) lines.push(["uptime", goSeconds(s.uptimeMs / 1000)], ["auth", String(s.auth)]);
  return lines.map(([k, v]) => `${`${k}:`.padEnd(15)}${v}`).join("\n");
}

/** The original's StatusInfo: its keys in its order, `version` left out when empty. */
function originalJson(s: BrokerStatus): Record<string, unknown> {
  return {
    ...(s.version && { version: s.version }),
    backend: s.backend,
    remote: s.remote,
    location: s.location,
    schema_version: s.schemaVersion,
    ping_ms: Math.round(s.pingMs),
    db_size_bytes: s.dbSizeBytes,
    queues: s.queues,
    subscriptions: s.subscriptions,
    uptime_ms: s.uptimeMs,
    auth: s.auth,
  };
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
    // A database opened in this process is no server: the original reports no version, uptime or auth.
    const seen = target.mode === "embedded" ? { ...status, version: "", uptimeMs: 0, auth: false } : status;
    await emit(flags, {
      text: originalText(seen),
      json: originalJson(seen),
      human: () => statusText(status, target.mode === "remote" ? target.url : undefined),
      wire: statusToWire(status),
    });
  });
}
