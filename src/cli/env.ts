import { parseSyncMode, type SyncMode } from "../open.js";
import { parseGoDuration } from "./duration.js";
import { CliError } from "./errors.js";
import { goQuote } from "./output/go.js";

/**
 * Environment settings read as the original reads them: a value that does not parse is not fatal;
 * a warning line says so and the default applies. (MQLITE_SYNC, a blank MQLITE_ADDR and an
 * unusable MQLITE_TOKENS are the original's exceptions: they stop the command.)
 */
export class EnvReader {
  readonly warnings: string[] = [];

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** The stderr line for a value that is ignored. */
  static warning(name: string, value: string): string {
    return `warning: ignoring unparseable ${name}=${goQuote(value)}; using default`;
  }

  private ignore<T>(name: string, value: string, fallback: T): T {
    this.warnings.push(EnvReader.warning(name, value));
    return fallback;
  }

  /** A base-10 integer (no trimming, a leading `+` allowed) accepted by `ok`, else the default with a warning. */
  integer(name: string, fallback: number, ok: (n: number) => boolean = () => true): number {
    const raw = this.env[name];
    if (raw === undefined || raw === "") return fallback;
    const n = /^[+-]?\d+$/.test(raw) ? Number(raw) : Number.NaN;
    return Number.isSafeInteger(n) && ok(n) ? n : this.ignore(name, raw, fallback);
  }

  /** A Go duration in ms, else the default with a warning. */
  duration(name: string, fallback: number): number {
    const raw = this.env[name];
    if (raw === undefined || raw === "") return fallback;
    try {
      return parseGoDuration(raw, name);
    } catch {
      return this.ignore(name, raw, fallback);
    }
  }

  /** One of `choices` (trimmed, lower-cased), else the default with a warning. */
  choice(name: string, choices: readonly string[], fallback: string): string {
    const raw = this.env[name];
    if (raw === undefined || raw.trim() === "") return fallback;
    const value = raw.trim().toLowerCase();
    return choices.includes(value) ? value : this.ignore(name, raw, fallback);
  }

  /** `MQLITE_SYNC`: NORMAL (default), FULL, OFF or EXTRA in any case; anything else stops the command. */
  synchronous(): SyncMode {
    try {
      return parseSyncMode(this.env.MQLITE_SYNC?.trim());
    } catch {
      throw new CliError(
        `invalid argument: unknown MQLITE_SYNC ${goQuote(this.env.MQLITE_SYNC ?? "")} (want NORMAL, FULL, OFF or EXTRA)`,
      );
    }
  }

  /** `MQLITE_MAX_MESSAGE_BYTES`: a positive count; undefined (the broker's 1 MiB) when unset or ignored. */
  maxMessageBytes(): number | undefined {
    const n = this.integer("MQLITE_MAX_MESSAGE_BYTES", 0, (v) => v > 0);
    return n > 0 ? n : undefined;
  }
}
