/**
 * Go fmt `%v` formatting (the `string()` builtin) and strconv float formatting.
 */
import { formatDuration } from "../time/duration.js";
import { GoTime } from "../time/go-time.js";
import { formatTime, LAYOUTS } from "../time/go-time-layout.js";
import { Location } from "../time/zones.js";
import { compareStrings } from "./utf8.js";
import {
  AnyKeyMap,
  Duration,
  GoFloat,
  GoFunc,
  GoMonth,
  GoWeekday,
  isPlainMap,
  type PlainMap,
  type Value,
} from "./values.js";

/** Shortest decimal digits and exponent of a finite non-zero |x|: x = 0.d1d2... × 10^dp. */
function shortestDigits(x: number): { digits: string; exp: number } {
  const s = Math.abs(x).toExponential();
  const e = s.indexOf("e");
  const mant = s.slice(0, e).replace(".", "");
  return { digits: mant, exp: Number(s.slice(e + 1)) };
}

/** Go strconv.FormatFloat(x, 'g', -1, 64), as used by `%v`. */
export function formatFloatG(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Number.POSITIVE_INFINITY) return "+Inf";
  if (x === Number.NEGATIVE_INFINITY) return "-Inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const sign = x < 0 ? "-" : "";
  const { digits, exp } = shortestDigits(x);
  // Shortest formatting switches to an exponent outside [1e-4, 1e6), unlike JavaScript.
  if (exp < -4 || exp >= 6) {
    const rest = digits.slice(1);
    const ae = Math.abs(exp);
    return `${sign}${digits[0]}${rest ? `.${rest}` : ""}e${exp < 0 ? "-" : "+"}${ae < 10 ? `0${ae}` : ae}`;
  }
  return sign + fixedFromDigits(digits, exp);
}

function fixedFromDigits(digits: string, exp: number): string {
  if (exp < 0) return `0.${"0".repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return digits + "0".repeat(exp + 1 - digits.length);
  return `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/** Go fmt `%v` of any value. */
export function formatValue(v: Value): string {
  if (v === null || v === undefined) return "<nil>";
  switch (typeof v) {
    case "boolean":
      return v ? "true" : "false";
    case "number":
      return Number.isInteger(v) && !Object.is(v, -0) ? String(v) : formatFloatG(v);
    case "bigint":
      return v.toString();
    case "string":
      return v;
  }
  if (v instanceof GoFloat) return formatFloatG(v.v);
  if (Array.isArray(v)) return `[${v.map(formatValue).join(" ")}]`;
  if (v instanceof Uint8Array) return `[${Array.from(v).join(" ")}]`;
  if (v instanceof GoTime) return formatTime(v, LAYOUTS.String);
  if (v instanceof Duration) return formatDuration(BigInt(v.ns));
  if (v instanceof GoMonth || v instanceof GoWeekday || v instanceof Location) return v.toString();
  if (v instanceof AnyKeyMap) {
    const entries = [...v.entries.values()].sort((a, b) => compareKeys(a[0], b[0]));
    return `map[${entries.map(([k, val]) => `${formatValue(k)}:${formatValue(val)}`).join(" ")}]`;
  }
  if (v instanceof GoFunc) return "0x0";
  if (isPlainMap(v)) {
    const m = v as PlainMap;
    const keys = Object.keys(m).sort(compareStrings);
    return `map[${keys.map((k) => `${k}:${formatValue(m[k])}`).join(" ")}]`;
  }
  return String(v);
}

function kindRank(v: Value): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === "boolean") return 1;
  if (typeof v === "number" || typeof v === "bigint" || v instanceof GoFloat) return 2;
  if (typeof v === "string") return 3;
  return 4;
}

/** Key order of Go's fmt for maps: nil, bools, numbers, strings, then the rest. */
export function compareKeys(a: Value, b: Value): number {
  const ra = kindRank(a);
  const rb = kindRank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 1) return (a ? 1 : 0) - (b ? 1 : 0);
  if (ra === 2) {
    const x = typeof a === "bigint" ? Number(a) : a instanceof GoFloat ? a.v : (a as number);
    const y = typeof b === "bigint" ? Number(b) : b instanceof GoFloat ? b.v : (b as number);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (ra === 3) return compareStrings(a as string, b as string);
  return 0;
}
