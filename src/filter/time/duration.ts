/**
 * Go time.Duration parsing and formatting.
 */
import { FilterRuntimeError } from "../errors.js";

const NS = 1n;
const US = 1000n;
const MS = 1000000n;
const S = 1000000000n;
const M = 60n * S;
const H = 60n * M;

/** Units of Go's time.ParseDuration. */
export const GO_DURATION_UNITS: ReadonlyMap<string, bigint> = new Map([
  ["ns", NS],
  ["us", US],
  ["µs", US], // U+00B5
  ["μs", US], // U+03BC
  ["ms", MS],
  ["s", S],
  ["m", M],
  ["h", H],
]);

/** Go's units plus days (24h) and weeks (7d), for the message environment's duration(). */
export const EXTENDED_DURATION_UNITS: ReadonlyMap<string, bigint> = new Map([
  ...GO_DURATION_UNITS,
  ["d", 24n * H],
  ["w", 7n * 24n * H],
]);

const LIMIT = 1n << 63n;

function quote(s: string): string {
  return JSON.stringify(s);
}

/** Go time.ParseDuration with a configurable unit table; returns nanoseconds. */
export function parseDuration(orig: string, units: ReadonlyMap<string, bigint> = GO_DURATION_UNITS): bigint {
  const invalid = () => new FilterRuntimeError(`time: invalid duration ${quote(orig)}`);
  let s = orig;
  let neg = false;
  if (s !== "" && (s[0] === "-" || s[0] === "+")) {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0n;
  if (s === "") throw invalid();
  let d = 0n;
  while (s !== "") {
    let v = 0n;
    let f = 0n;
    let scale = 1;
    const c0 = s[0] as string;
    if (!(c0 === "." || (c0 >= "0" && c0 <= "9"))) throw invalid();
    // Leading integer.
    let i = 0;
    while (i < s.length && (s[i] as string) >= "0" && (s[i] as string) <= "9") {
      v = v * 10n + BigInt((s.charCodeAt(i) - 48) as number);
      if (v >= LIMIT) throw invalid();
      i++;
    }
    const pre = i > 0;
    s = s.slice(i);
    let post = false;
    if (s !== "" && s[0] === ".") {
      s = s.slice(1);
      let j = 0;
      let overflow = false;
      while (j < s.length && (s[j] as string) >= "0" && (s[j] as string) <= "9") {
        if (!overflow) {
          if (f > (LIMIT - 1n) / 10n) {
            overflow = true;
          } else {
            f = f * 10n + BigInt(s.charCodeAt(j) - 48);
            scale *= 10;
          }
        }
        j++;
      }
      post = j > 0;
      s = s.slice(j);
    }
    if (!pre && !post) throw invalid();
    let u = 0;
    while (u < s.length) {
      const c = s[u] as string;
      if (c === "." || (c >= "0" && c <= "9")) break;
      u++;
    }
    if (u === 0) throw new FilterRuntimeError(`time: missing unit in duration ${quote(orig)}`);
    const unitName = s.slice(0, u);
    s = s.slice(u);
    const unit = units.get(unitName);
    if (unit === undefined) {
      throw new FilterRuntimeError(`time: unknown unit ${quote(unitName)} in duration ${quote(orig)}`);
    }
    if (v > LIMIT / unit) throw invalid();
    v *= unit;
    if (f > 0n) {
      // float64 arithmetic, as Go does, to stay nanosecond-accurate for fractions of hours.
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > LIMIT) throw invalid();
    }
    d += v;
    if (d > LIMIT) throw invalid();
  }
  if (neg) return -d;
  if (d > LIMIT - 1n) throw invalid();
  return d;
}

/** Go Duration.String(): "1h30m0s", "1.5s", "300ms", "0s". */
export function formatDuration(dIn: bigint): string {
  if (dIn === 0n) return "0s";
  const neg = dIn < 0n;
  let u = neg ? -dIn : dIn;
  let out: string;
  if (u < S) {
    // Sub-second: use the largest unit that keeps a non-zero integer part.
    let prec: number;
    let unit: string;
    if (u < US) {
      return `${neg ? "-" : ""}${u}ns`;
    }
    if (u < MS) {
      prec = 3;
      unit = "µs";
    } else {
      prec = 6;
      unit = "ms";
    }
    out = fmtFrac(u, prec) + unit;
  } else {
    let w = fmtFrac(u, 9);
    u /= S;
    const secs = u % 60n;
    // fmtFrac gave "<secs>.<frac>"; rebuild with seconds modulo 60.
    const dot = w.indexOf(".");
    const frac = dot >= 0 ? w.slice(dot) : "";
    w = `${secs}${frac}s`;
    u /= 60n;
    if (u > 0n) {
      w = `${u % 60n}m${w}`;
      u /= 60n;
      if (u > 0n) w = `${u}h${w}`;
    }
    out = w;
  }
  return (neg ? "-" : "") + out;
}

/** v / 10^prec with trailing zeros of the fraction removed ("1.5", "2"). */
function fmtFrac(v: bigint, prec: number): string {
  const p = 10n ** BigInt(prec);
  const int = v / p;
  let frac = (v % p).toString().padStart(prec, "0").replace(/0+$/, "");
  if (frac !== "") frac = `.${frac}`;
  return `${int}${frac}`;
}
