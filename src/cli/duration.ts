import { CliError } from "./errors.js";

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /(\d*\.?\d*)(ns|us|µs|μs|ms|s|m|h)/y;

/**
 * Parses a Go duration (`336h`, `1h30m`, `1.5s`, `250ms`, `0`) into whole milliseconds, as the
 * original's environment variables take them.
 */
export function parseGoDuration(text: string, what = "duration"): number {
  return Math.round(parseGoDurationMs(text, what));
}

/**
 * A Go duration in milliseconds with its fraction kept (`500us` is 0.5): the original's flags
 * truncate to whole milliseconds, and some check "at least 1ms" before they do.
 */
export function parseGoDurationMs(text: string, what = "duration"): number {
  const s = text.trim();
  const fail = () => new CliError(`invalid ${what} "${text}" (use a Go duration such as 336h, 90m or 1.5s)`);
  if (s === "0" || s === "+0" || s === "-0") return 0;
  let i = 0;
  let sign = 1;
  if (s[0] === "-" || s[0] === "+") {
    sign = s[0] === "-" ? -1 : 1;
    i = 1;
  }
  if (i >= s.length) throw fail();
  let total = 0;
  while (i < s.length) {
    PART.lastIndex = i;
    const m = PART.exec(s);
    if (!m || m[1] === "" || m[1] === ".") throw fail();
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    i = PART.lastIndex;
  }
  return sign * total;
}
