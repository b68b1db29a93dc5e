import { type Command, InvalidArgumentError, Option } from "commander";
import type { ConnectionFlags } from "./connect/target.js";
import { parseGoDuration } from "./duration.js";

export type OutputFormat = "text" | "json";

/** The flags of every data and admin command: where the broker is, and how to print. */
export interface BrokerFlags extends ConnectionFlags {
  output: OutputFormat;
}

/** Adds `--output` (text for people, wire-named JSON for scripts). */
export function addOutputOption(cmd: Command): Command {
  return cmd.addOption(
    new Option("-o, --output <format>", "text (aligned, for people) or json (wire field names, for scripts)")
      .choices(["text", "json"])
      .default("text"),
  );
}

/** Adds the connection flags and `--output` (last, so a command's own flags come first in its help). */
export function addBrokerOptions(cmd: Command): Command {
  cmd
    .option(
      "--endpoint <url>",
      "served broker: http(s)://host:port, mqlite://host or mqlites://host (env MQLITE_ENDPOINT)",
    )
    .option("--token <token>", "bearer token for --endpoint; --token= sends none (env MQLITE_TOKEN)")
    .option(
      "--db <path>",
      "database file opened in this process: path, file:path or :memory: (env MQLITE_DB)",
    );
  return addOutputOption(cmd);
}

/** A Go duration (`30s`, `1h30m`, `250ms`, `0`) in ms; negative only when `allowNegative`. */
export function duration(allowNegative = false): (value: string) => number {
  return (value) => {
    let ms: number;
    try {
      ms = parseGoDuration(value);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
    if (ms < 0 && !allowNegative) throw new InvalidArgumentError("a duration must not be negative");
    return ms;
  };
}

/** A whole decimal number, at least `min`. */
export function integer(min: number): (value: string) => number {
  return (value) => {
    const text = value.trim();
    const n = Number(text);
    if (!/^[-+]?\d+$/.test(text) || !Number.isSafeInteger(n))
      throw new InvalidArgumentError("not a whole number");
    if (n < min) throw new InvalidArgumentError(`must be at least ${min}`);
    return n;
  };
}

/** A sequence number (a whole number ≥ 1). */
export const seqNumber = integer(1);

/** `42,57`: sequence numbers, comma-separated (a repeated flag adds to the list). */
export function seqList(value: string, previous: number[] = []): number[] {
  const parts = value.split(",").map((p) => p.trim());
  if (parts.some((p) => p === "")) throw new InvalidArgumentError("give sequence numbers such as 42,57");
  return [...previous, ...parts.map(seqNumber)];
}

/** `k=v,k=v`: message properties (a repeated flag adds to them; a value may contain `=`). */
export function properties(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const out = { ...previous };
  for (const pair of value.split(",")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new InvalidArgumentError(`"${pair}" is not key=value`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1);
  }
  return out;
}
