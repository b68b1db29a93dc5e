/**
 * Runtime representation of expr values.
 *
 * - nil: `null` (`undefined` is read as nil too).
 * - bool: `boolean`.
 * - int (Go int64): a JS `number` holding a safe integer, or a `bigint` outside the safe range.
 *   The form is canonical (a bigint never holds a safe integer) so `===` is equality.
 * - float (Go float64): a non-integral JS `number` (including NaN and ±Inf), or a {@link GoFloat}
 *   box for integral values (`2.0`, `-0.0`), so that ints and floats stay distinct.
 * - string: JS `string`.
 * - array: JS array. map[string]any: a plain object (own properties only). Maps with keys of any
 *   type: {@link AnyKeyMap}. bytes: `Uint8Array`.
 * - time.Time: {@link GoTime}; time.Duration: {@link Duration}; time.Month / time.Weekday:
 *   {@link GoMonth} / {@link GoWeekday}; *time.Location: {@link Location}; functions: {@link GoFunc}.
 */
import { FilterRuntimeError } from "../errors.js";
import type { GoTime } from "../time/go-time.js";
import type { Location } from "../time/zones.js";

/** An int64 value: a safe-integer number or a bigint beyond the safe range. */
export type Int = number | bigint;

/** Any runtime value. */
export type Value =
  | null
  | undefined
  | boolean
  | number
  | bigint
  | string
  | GoFloat
  | Value[]
  | PlainMap
  | AnyKeyMap
  | Uint8Array
  | GoTime
  | Duration
  | GoMonth
  | GoWeekday
  | Location
  | GoFunc;

/** map[string]any */
export interface PlainMap {
  [key: string]: Value;
}

/** An integral float64 (kept apart from ints). */
export class GoFloat {
  constructor(readonly v: number) {}
}

/** time.Duration: int64 nanoseconds. */
export class Duration {
  constructor(readonly ns: Int) {}
}

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** time.Month (1..12). */
export class GoMonth {
  constructor(readonly n: number) {}
  toString(): string {
    return MONTHS[this.n - 1] ?? `%!Month(${this.n})`;
  }
}

/** time.Weekday (0 = Sunday). */
export class GoWeekday {
  constructor(readonly n: number) {}
  toString(): string {
    return WEEKDAYS[this.n] ?? `%!Weekday(${this.n})`;
  }
}

/** A callable value: a builtin referenced without a call, or a bound method. */
export class GoFunc {
  constructor(
    readonly name: string,
    readonly signature: string,
    readonly fn: (args: Value[]) => Value,
  ) {}
}

/** A map whose keys may be of any hashable type (Go map[any]any). */
/**
 * A nil slice (Go `[]any(nil)`), as `sort` returns for a non-array: it has no elements (len 0,
 * loops run zero times, it equals `[]`) yet counts as nil for `??` and prints as JSON `null`.
 */
export const NIL_SLICE: Value[] = Object.freeze([] as Value[]) as Value[];

/**
 * Marks the arrays `toPairs` returns: Go `[][2]any`, not `[]any`, so `sort` (which sorts only
 * `[]any` and typed slices of scalars) gives nil for them.
 */
export const PAIRS_ARRAY: unique symbol = Symbol("[][2]any");

export class AnyKeyMap {
  readonly entries = new Map<string, [Value, Value]>();
  /**
   * True for a `groupBy` result (Go `map[any][]any`), whose keys keep their `any` type even when
   * all are strings; `fromPairs` builds an untagged one.
   */
  constructor(readonly grouped = false) {}
  get size(): number {
    return this.entries.size;
  }
  get(key: Value): Value | undefined {
    return this.entries.get(hashKey(key))?.[1];
  }
  has(key: Value): boolean {
    return this.entries.has(hashKey(key));
  }
  set(key: Value, value: Value): void {
    this.entries.set(hashKey(key), [key, value]);
  }
}

// ---- ints ------------------------------------------------------------------------------------

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const MIN_SAFE = -MAX_SAFE;

/** Canonical int from a bigint, wrapped to 64 bits. */
export function intFromBig(b: bigint): Int {
  const w = BigInt.asIntN(64, b);
  return w >= -9007199254740991n && w <= 9007199254740991n ? Number(w) : w;
}

export function isIntValue(v: unknown): v is Int {
  return typeof v === "number" ? Number.isInteger(v) && !Object.is(v, -0) : typeof v === "bigint";
}

export function isFloatValue(v: unknown): v is number | GoFloat {
  return typeof v === "number" ? !Number.isInteger(v) || Object.is(v, -0) : v instanceof GoFloat;
}

export function isNumberValue(v: unknown): v is Int | number | GoFloat {
  return typeof v === "number" || typeof v === "bigint" || v instanceof GoFloat;
}

/** Makes a float value from a JS number (boxing integral values). */
export function mkFloat(x: number): number | GoFloat {
  return Number.isInteger(x) ? new GoFloat(x) : x;
}

/** The float64 value of any number (ints are converted, as Go's float64(x)). */
export function toF(v: Value): number {
  if (typeof v === "number") return v;
  if (v instanceof GoFloat) return v.v;
  return Number(v as bigint);
}

export function intAdd(a: Int, b: Int): Int {
  if (typeof a === "number" && typeof b === "number") {
    const r = a + b;
    if (r <= MAX_SAFE && r >= MIN_SAFE) return r;
  }
  return intFromBig(BigInt(a) + BigInt(b));
}

export function intSub(a: Int, b: Int): Int {
  if (typeof a === "number" && typeof b === "number") {
    const r = a - b;
    if (r <= MAX_SAFE && r >= MIN_SAFE) return r;
  }
  return intFromBig(BigInt(a) - BigInt(b));
}

export function intMul(a: Int, b: Int): Int {
  if (typeof a === "number" && typeof b === "number") {
    const r = a * b;
    if (r <= MAX_SAFE && r >= MIN_SAFE) return r + 0; // + 0 turns -0 into 0
  }
  return intFromBig(BigInt(a) * BigInt(b));
}

export function intNeg(a: Int): Int {
  if (typeof a === "number") return a === 0 ? 0 : -a;
  return intFromBig(-a);
}

/** Go's truncated modulo; the divisor must be non-zero. */
export function intMod(a: Int, b: Int): Int {
  if (b === 0) throw new FilterRuntimeError("runtime error: integer divide by zero");
  if (typeof a === "number" && typeof b === "number") {
    const r = a % b;
    return r + 0;
  }
  return intFromBig(BigInt(a) % BigInt(b));
}

/** Converts an int to a JS number (may lose precision beyond 2^53). */
export function intToNumber(a: Int): number {
  return typeof a === "number" ? a : Number(a);
}

/** Go int64(float64): truncation toward zero; out of range values follow amd64 (min int64). */
export function floatToInt(f: number): Int {
  if (Number.isNaN(f) || !Number.isFinite(f)) return -9223372036854775808n;
  const t = Math.trunc(f);
  if (t >= MIN_SAFE && t <= MAX_SAFE) return t + 0;
  if (t >= 2 ** 63 || t < -(2 ** 63)) return -9223372036854775808n;
  return intFromBig(BigInt(t));
}

/** Go's ToInt used by indexing and slicing: ints as is, floats truncated. */
export function toIndexInt(v: Value): Int {
  if (typeof v === "number") return Number.isInteger(v) ? v + 0 : floatToInt(v);
  if (typeof v === "bigint") return v;
  if (v instanceof GoFloat) return floatToInt(v.v);
  throw new FilterRuntimeError(`invalid operation: int(${goTypeName(v)})`);
}

// ---- type names ------------------------------------------------------------------------------

export function isPlainMap(v: unknown): v is PlainMap {
  if (v === null || typeof v !== "object") return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null || proto === TYPED_STRING_MAP_PROTO;
}

/**
 * Prototype marking a map[string]string: a missing key reads as "" (the Go zero value) instead of
 * nil. Objects built with {@link stringMap} carry it.
 */
export const TYPED_STRING_MAP_PROTO: object = Object.freeze(Object.create(null));

/** Builds a map[string]string value, whose missing keys read as "". */
export function stringMap(entries: Record<string, string>): PlainMap {
  const m = Object.create(TYPED_STRING_MAP_PROTO) as PlainMap;
  for (const k of Object.keys(entries)) m[k] = entries[k] as string;
  return m;
}

/** The Go `%T` name of a value, used in error messages. */
export function goTypeName(v: Value): string {
  if (v === null || v === undefined) return "<nil>";
  switch (typeof v) {
    case "boolean":
      return "bool";
    case "number":
      return Number.isInteger(v) && !Object.is(v, -0) ? "int" : "float64";
    case "bigint":
      return "int";
    case "string":
      return "string";
  }
  if (v instanceof GoFloat) return "float64";
  if (Array.isArray(v)) return "[]interface {}";
  if (v instanceof Uint8Array) return "[]uint8";
  if (v instanceof Duration) return "time.Duration";
  if (v instanceof GoMonth) return "time.Month";
  if (v instanceof GoWeekday) return "time.Weekday";
  if (v instanceof AnyKeyMap) return "map[interface {}]interface {}";
  if (v instanceof GoFunc) return v.signature;
  if (isPlainMap(v)) {
    return Object.getPrototypeOf(v) === TYPED_STRING_MAP_PROTO
      ? "map[string]string"
      : "map[string]interface {}";
  }
  const tag = (v as { goTypeName?: string }).goTypeName;
  return tag ?? "unknown";
}

/** Hash key for {@link AnyKeyMap}; unhashable values are a runtime error, as in Go. */
export function hashKey(v: Value): string {
  if (v === null || v === undefined) return "n";
  switch (typeof v) {
    case "boolean":
      return v ? "b1" : "b0";
    case "number":
      return Number.isInteger(v) && !Object.is(v, -0) ? `i${v}` : `f${v}`;
    case "bigint":
      return `i${v}`;
    case "string":
      return `s${v}`;
  }
  if (v instanceof GoFloat) return `f${v.v}`;
  if (v instanceof Duration) return `d${v.ns}`;
  if (v instanceof GoMonth) return `M${v.n}`;
  if (v instanceof GoWeekday) return `W${v.n}`;
  const hk = (v as { hashKey?: () => string }).hashKey;
  if (typeof hk === "function") return hk.call(v);
  throw new FilterRuntimeError(`runtime error: hash of unhashable type ${goTypeName(v)}`);
}
