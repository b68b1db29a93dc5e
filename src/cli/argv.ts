import type { Option } from "commander";
import { USAGE_EXIT } from "./errors.js";

/**
 * A flag the command line cannot parse, worded as Go's flag package words it (the original CLI's
 * first stderr line). Exit status 2, like every flag error of the original.
 */
export class FlagError extends Error {
  readonly exitCode = USAGE_EXIT;
  constructor(message: string) {
    super(message);
    this.name = "FlagError";
  }
}

const TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE = new Set(["0", "f", "F", "FALSE", "false", "False"]);

function longName(option: Option): string | undefined {
  return option.long?.replace(/^--/, "");
}

/**
 * Rewrites a command's arguments from the original's Go flag syntax to the one the parser reads:
 * `-max 5` and `-max=5` become `--max 5` (one dash or two, as Go allows), a boolean takes
 * `--all=true` / `--all=false`, and a value flag always takes the next argument, even one that
 * starts with `-` (`--max -1`). Everything after `--` is left alone; so are short options (`-o`).
 * An unknown flag is refused here, with Go's wording.
 */
export function goFlags(args: string[], options: readonly Option[]): string[] {
  const byName = new Map<string, Option>();
  for (const option of options) {
    const name = longName(option);
    if (name) byName.set(name, option);
  }
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      out.push(...args.slice(i));
      break;
    }
    if (arg === "-" || !arg.startsWith("-")) {
      out.push(arg);
      continue;
    }
    const m = /^(--?)([^=]*)(?:=([\s\S]*))?$/.exec(arg)!;
    const [, dashes, name = "", value] = m;
    if (name === "" || name.startsWith("-") || name.startsWith("="))
      throw new FlagError(`bad flag syntax: ${arg}`);
    if (["h", "help"].includes(name)) {
      out.push("--help");
      continue;
    }
    const option = byName.get(name);
    if (!option) {
      // A one-letter short option (`-o json`) is the parser's own; anything else is unknown.
      if (dashes === "-" && name.length === 1 && options.some((o) => o.short === `-${name}`)) {
        out.push(arg);
        continue;
      }
      throw new FlagError(`flag provided but not defined: -${name}`);
    }
    if (!option.required && !option.optional) {
      if (value === undefined || TRUE.has(value)) out.push(`--${name}`);
      else if (!FALSE.has(value))
        throw new FlagError(`invalid boolean value "${value}" for -${name}: parse error`);
      continue;
    }
    if (value !== undefined) {
      out.push(`--${name}=${value}`);
      continue;
    }
    if (i + 1 >= args.length) throw new FlagError(`flag needs an argument: -${name}`);
    out.push(`--${name}=${args[++i]!}`);
  }
  return out;
}
