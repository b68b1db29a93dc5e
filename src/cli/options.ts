import { type Command, InvalidArgumentError, Option } from "commander";
import type { ConnectionFlags } from "./connect/target.js";
import { parseGoDurationMs } from "./duration.js";
import { UsageError } from "./errors.js";

/**
 * `text` and `json` are the original CLI's outputs, byte for byte (scripts parse them); `human`
 * prints aligned tables and sentences, `wire` the HTTP API's answer under its wire names.
 */
export const OUTPUT_FORMATS = ["text", "json", "human", "wire"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The flags of every data and admin command: where the broker is, and how to print. */
export interface BrokerFlags extends ConnectionFlags {
  output: OutputFormat;
}

/** Adds `--output` (checked before the command runs: a bad value is an `error:` line, exit 1). */
export function addOutputOption(cmd: Command): Command {
  return cmd.addOption(
    new Option(
      "-o, --output <format>",
      "text or json (the original CLI's lines and JSON), human (aligned tables), wire (HTTP API JSON)",
    ).default("text"),
  );
}

/** `--output`'s value, refused as the original refuses it when it is none of the formats. */
export function checkOutput(value: unknown): void {
  if (value !== undefined && !(OUTPUT_FORMATS as readonly unknown[]).includes(value))
    throw new UsageError(`invalid --output "${String(value)}": want text or json (or human, wire)`);
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

/**
 * A Go duration flag (`30s`, `1h30m`, `250ms`, `0`) in milliseconds, fraction kept (the command
 * truncates); negative only when `allowNegative`.
 */
export function duration(allowNegative = false): (value: string) => number {
  return (value) => {
    let ms: number;
    try {
      ms = parseGoDurationMs(value);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
    if (ms < 0 && !allowNegative) throw new InvalidArgumentError("a duration must not be negative");
    return ms;
  };
}

/**
 * A Go integer flag (`strconv.ParseInt(s, 0, 64)`): decimal, `0x1f`, `0o17`, `017` (octal),
 * `0b101`, with `_` between digits; at least `min`.
 */
export function integer(min = Number.MIN_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const n = parseGoInt(value);
    if (n === undefined) throw new InvalidArgumentError("parse error");
    if (n < min) throw new InvalidArgumentError(`must be at least ${min}`);
    return n;
  };
}

/** Parses an integer as Go's flag package does, or undefined. */
export function parseGoInt(text: string): number | undefined {
  const negative = text.startsWith("-");
  const body = /^[+-]/.test(text) ? text.slice(1) : text;
  const prefix = /^0[xXoObB]/.test(body) ? body.slice(0, 2) : body.length > 1 && body[0] === "0" ? "0" : "";
  const radix = { "": 10, "0": 8, x: 16, o: 8, b: 2 }[prefix.slice(1).toLowerCase() || prefix] ?? 10;
  const digits = body.slice(prefix.length);
  // `_` must sit between digits; a base prefix counts as one.
  const spaced = (prefix ? "0" : "") + digits;
  if (spaced === "" || spaced.startsWith("_") || spaced.endsWith("_") || spaced.includes("__"))
    return undefined;
  const plain = digits.replace(/_/g, "");
  const valid = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^\d+$/, 16: /^[0-9a-fA-F]+$/ }[radix]!;
  if (prefix === "0" && plain === "") return 0;
  if (!valid.test(plain)) return undefined;
  const n = Number.parseInt(plain, radix);
  if (!Number.isSafeInteger(n)) return undefined;
  return negative ? -n : n;
}

/** A sequence number as the original parses it (base 10, positive), or a usage error (exit 1). */
export function seqNumber(text: string): number {
  const n = /^[+-]?\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n))
    throw new UsageError(`invalid seq "${text}": strconv.ParseInt: parsing "${text}": invalid syntax`);
  if (n <= 0) throw new UsageError(`invalid seq ${n}: sequence numbers are positive`);
  return n;
}

/** `42,57`: sequence numbers, comma-separated, blanks skipped (a repeated flag adds to the list). */
export function seqList(value: string, previous: number[] = []): number[] {
  const parts = value
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  return [...previous, ...parts.map(seqNumber)];
}

/** `k=v,k=v`: message properties (a repeated flag adds to them; a value may contain `=`). */
export function properties(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const out = { ...previous };
  if (value === "") return out;
  for (const pair of value.split(",")) {
    const eq = pair.indexOf("=");
    if (eq < 0) throw new UsageError(`invalid --prop "${pair}": want k=v`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1);
  }
  return out;
}
