/**
 * Operators on dynamic values, with upstream's runtime semantics (vm/runtime in Go). The compiler
 * uses these when static types do not allow a specialised fast path.
 */
import { FilterRuntimeError } from "../errors.js";
import { GoTime, subTimes } from "../time/go-time.js";
import { methodsOfValue } from "../time/methods.js";
import { byteAt, byteLength, compareStrings, sliceBytes } from "./utf8.js";
import {
  AnyKeyMap,
  Duration,
  GoFloat,
  GoFunc,
  GoMonth,
  GoWeekday,
  goTypeName,
  type Int,
  intAdd,
  intFromBig,
  intMod,
  intMul,
  intNeg,
  intSub,
  isPlainMap,
  mkFloat,
  type PlainMap,
  TYPED_STRING_MAP_PROTO,
  toF,
  toIndexInt,
  type Value,
} from "./values.js";

const isNum = (v: Value): boolean => typeof v === "number" || typeof v === "bigint" || v instanceof GoFloat;
const isIntV = (v: Value): v is Int =>
  (typeof v === "number" && Number.isInteger(v) && !Object.is(v, -0)) || typeof v === "bigint";

function invalid(op: string, a: Value, b: Value): FilterRuntimeError {
  return new FilterRuntimeError(`invalid operation: ${goTypeName(a)} ${op} ${goTypeName(b)}`);
}

export function isNil(v: Value): boolean {
  return v === null || v === undefined;
}

// ---- arithmetic ------------------------------------------------------------------------------

export function add(a: Value, b: Value): Value {
  if (isIntV(a) && isIntV(b)) return intAdd(a, b);
  if (isNum(a) && isNum(b)) return mkFloat(toF(a) + toF(b));
  if (typeof a === "string" && typeof b === "string") return a + b;
  if (a instanceof GoTime && b instanceof Duration) return a.addNanos(BigInt(b.ns));
  if (a instanceof Duration) {
    if (b instanceof GoTime) return b.addNanos(BigInt(a.ns));
    if (b instanceof Duration) return new Duration(intAdd(a.ns, b.ns));
  }
  throw invalid("+", a, b);
}

export function sub(a: Value, b: Value): Value {
  if (isIntV(a) && isIntV(b)) return intSub(a, b);
  if (isNum(a) && isNum(b)) return mkFloat(toF(a) - toF(b));
  if (a instanceof GoTime) {
    if (b instanceof GoTime) return new Duration(intFromBig(subTimes(a, b)));
    if (b instanceof Duration) return a.addNanos(-BigInt(b.ns));
  }
  if (a instanceof Duration && b instanceof Duration) return new Duration(intSub(a.ns, b.ns));
  throw invalid("-", a, b);
}

export function mul(a: Value, b: Value): Value {
  if (isIntV(a) && isIntV(b)) return intMul(a, b);
  if (isNum(a) && isNum(b)) return mkFloat(toF(a) * toF(b));
  if (a instanceof Duration) {
    if (isIntV(b)) return new Duration(intMul(a.ns, b));
    if (isNum(b)) return mkFloat(toF(a.ns) * toF(b));
    if (b instanceof Duration) return new Duration(intMul(a.ns, b.ns));
  }
  if (b instanceof Duration) {
    if (isIntV(a)) return new Duration(intMul(a, b.ns));
    if (isNum(a)) return mkFloat(toF(a) * toF(b.ns));
  }
  throw invalid("*", a, b);
}

export function div(a: Value, b: Value): Value {
  if (isNum(a) && isNum(b)) return mkFloat(toF(a) / toF(b));
  throw invalid("/", a, b);
}

export function mod(a: Value, b: Value): Value {
  if (isIntV(a) && isIntV(b)) return intMod(a, b);
  throw invalid("%", a, b);
}

/** Go math.Pow, which differs from JS for a base of ±1 with a NaN or infinite exponent. */
export function goPow(x: number, y: number): number {
  if (x === 1) return 1;
  if (x === -1 && !Number.isFinite(y) && !Number.isNaN(y)) return 1;
  return x ** y;
}

export function pow(a: Value, b: Value): Value {
  if (isNum(a) && isNum(b)) return mkFloat(goPow(toF(a), toF(b)));
  throw invalid("**", a, b);
}

export function negate(a: Value): Value {
  if (isIntV(a)) return intNeg(a);
  if (isNum(a)) return mkFloat(-toF(a));
  throw new FilterRuntimeError(`invalid operation: - ${goTypeName(a)}`);
}

export function plus(a: Value): Value {
  if (isNum(a)) return a;
  throw new FilterRuntimeError(`invalid operation: + ${goTypeName(a)}`);
}

// ---- comparison ------------------------------------------------------------------------------

/** Three-way comparison for `<`, `>`, `<=`, `>=`; NaN compares as "unordered" (returns NaN). */
export function compare(a: Value, b: Value, op: string): number {
  if (typeof a === "number" && typeof b === "number")
    return a < b ? -1 : a > b ? 1 : a === b ? 0 : Number.NaN;
  if (isNum(a) && isNum(b)) {
    if (isIntV(a) && isIntV(b)) return a < b ? -1 : a > b ? 1 : 0;
    const x = toF(a);
    const y = toF(b);
    return x < y ? -1 : x > y ? 1 : x === y ? 0 : Number.NaN;
  }
  if (typeof a === "string" && typeof b === "string") return compareStrings(a, b);
  if (a instanceof GoTime && b instanceof GoTime) return a.compare(b);
  if (a instanceof Duration && b instanceof Duration) return a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0;
  throw invalid(op, a, b);
}

export const less = (a: Value, b: Value): boolean => compare(a, b, "<") < 0;
export const more = (a: Value, b: Value): boolean => compare(a, b, ">") > 0;
export const lessOrEqual = (a: Value, b: Value): boolean => compare(a, b, "<=") <= 0;
export const moreOrEqual = (a: Value, b: Value): boolean => compare(a, b, ">=") >= 0;

/** runtime.Equal: numbers across int/float, times by instant, arrays element-wise, else DeepEqual. */
export function equal(a: Value, b: Value): boolean {
  if (a === b && typeof a !== "object") return true; // never NaN: NaN !== NaN
  if (a === null || a === undefined) return b === null || b === undefined;
  if (b === null || b === undefined) return false;
  if (isNum(a)) return isNum(b) && numEqual(a, b);
  if (typeof a === "string" || typeof a === "boolean") return a === b;
  if (a instanceof GoTime) return b instanceof GoTime && a.equal(b);
  if (a instanceof Duration) return b instanceof Duration && a.ns === b.ns;
  if (Array.isArray(a) || a instanceof Uint8Array) {
    // Slices of any element type compare element-wise ([]byte against []any too).
    if (!(Array.isArray(b) || b instanceof Uint8Array) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equal(a[i] as Value, b[i] as Value)) return false;
    return true;
  }
  return deepEqual(a, b);
}

function numEqual(a: Value, b: Value): boolean {
  if (isIntV(a) && isIntV(b)) return a === b;
  return toF(a) === toF(b);
}

/** Go reflect.DeepEqual: type-strict (an int never equals a float). */
export function deepEqual(a: Value, b: Value): boolean {
  if (a === null || a === undefined || b === null || b === undefined) {
    return (a === null || a === undefined) && (b === null || b === undefined);
  }
  if (goTypeName(a) !== goTypeName(b)) return false;
  if (isNum(a)) {
    if (isIntV(a)) return a === b;
    return toF(a) === toF(b);
  }
  if (typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a)) {
    const bb = b as Value[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], bb[i])) return false;
    return true;
  }
  if (a instanceof Uint8Array) {
    const bb = b as Uint8Array;
    return a.length === bb.length && a.every((x, i) => x === bb[i]);
  }
  if (a instanceof GoTime) {
    const bt = b as GoTime;
    return a.sec === bt.sec && a.nsec === bt.nsec && a.loc === bt.loc;
  }
  if (a instanceof Duration) return a.ns === (b as Duration).ns;
  if (a instanceof GoMonth || a instanceof GoWeekday) return a.n === (b as GoMonth).n;
  if (a instanceof AnyKeyMap) {
    const bm = b as AnyKeyMap;
    if (a.size !== bm.size) return false;
    for (const [h, [, v]] of a.entries) {
      const o = bm.entries.get(h);
      if (!o || !deepEqual(v, o[1])) return false;
    }
    return true;
  }
  if (isPlainMap(a)) {
    const bm = b as PlainMap;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(bm).length) return false;
    for (const k of ka) {
      if (!Object.hasOwn(bm, k) || !deepEqual(a[k], bm[k])) return false;
    }
    return true;
  }
  return a === b;
}

// ---- membership and string operators ---------------------------------------------------------

/** The `in` operator. */
export function inOp(needle: Value, haystack: Value): boolean {
  if (haystack === null || haystack === undefined) return false;
  if (Array.isArray(haystack)) {
    for (let i = 0; i < haystack.length; i++) if (equal(haystack[i], needle)) return true;
    return false;
  }
  if (haystack instanceof Uint8Array) {
    for (const b of haystack) if (equal(b, needle)) return true;
    return false;
  }
  if (haystack instanceof AnyKeyMap) return haystack.has(needle);
  if (isPlainMap(haystack)) {
    if (needle === null || needle === undefined) return Object.hasOwn(haystack, "");
    if (typeof needle !== "string") {
      throw new FilterRuntimeError(
        `reflect.Value.MapIndex: value of type ${goTypeName(needle)} is not assignable to type string`,
      );
    }
    return Object.hasOwn(haystack, needle);
  }
  throw new FilterRuntimeError(`operator "in" not defined on ${goTypeName(haystack)}`);
}

function stringOperands(op: string, a: Value, b: Value): boolean {
  if (typeof a === "string" && typeof b === "string") return true;
  if (a === null || a === undefined || b === null || b === undefined) return false;
  throw invalid(op, a, b);
}

export function contains(a: Value, b: Value): boolean {
  return stringOperands("contains", a, b) && (a as string).includes(b as string);
}
export function startsWith(a: Value, b: Value): boolean {
  return stringOperands("startsWith", a, b) && (a as string).startsWith(b as string);
}
export function endsWith(a: Value, b: Value): boolean {
  return stringOperands("endsWith", a, b) && (a as string).endsWith(b as string);
}

// ---- member access ---------------------------------------------------------------------------

/** Reads a key of a map (missing key: the zero value of the map's element type). */
export function mapGet(m: PlainMap, key: string): Value {
  if (Object.hasOwn(m, key)) return m[key];
  return Object.getPrototypeOf(m) === TYPED_STRING_MAP_PROTO ? "" : null;
}

function indexArray(len: number, i: Value): number {
  let idx = Number(toIndexInt(i));
  if (idx < 0) idx += len;
  if (idx < 0 || idx >= len) {
    throw new FilterRuntimeError(`index out of range: ${idx} (array length is ${len})`);
  }
  return idx;
}

/** runtime.Fetch: `from[i]` / `from.i` on a dynamic value. */
export function fetch(from: Value, i: Value): Value {
  if (from === null || from === undefined) {
    throw new FilterRuntimeError(`cannot fetch ${describeKey(i)} from <nil>`);
  }
  if (typeof i === "string") {
    const methods = methodsOfValue(from);
    const m = methods?.get(i);
    if (m) return new GoFunc(i, "func", (args) => m.call(from, args));
  }
  if (Array.isArray(from)) return from[indexArray(from.length, i)];
  if (typeof from === "string") {
    const len = byteLength(from);
    return byteAt(from, indexArray(len, i));
  }
  if (from instanceof Uint8Array) return from[indexArray(from.length, i)] as number;
  if (from instanceof AnyKeyMap) {
    const v = from.get(i);
    return v === undefined ? null : v;
  }
  if (isPlainMap(from)) {
    if (i === null || i === undefined) return mapGet(from, "");
    if (typeof i !== "string") {
      throw new FilterRuntimeError(
        `reflect.Value.MapIndex: value of type ${goTypeName(i)} is not assignable to type string`,
      );
    }
    return mapGet(from, i);
  }
  throw new FilterRuntimeError(`cannot fetch ${describeKey(i)} from ${goTypeName(from)}`);
}

function describeKey(i: Value): string {
  return i === null || i === undefined ? "<nil>" : String(i);
}

/** runtime.Slice: `node[from:to]` on arrays, strings (by bytes) and bytes. */
export function slice(v: Value, fromV: Value | undefined, toV: Value | undefined): Value {
  let length: number;
  if (Array.isArray(v) || v instanceof Uint8Array) length = v.length;
  else if (typeof v === "string") length = byteLength(v);
  else throw new FilterRuntimeError(`cannot slice ${goTypeName(v)}`);
  let a = fromV === undefined ? 0 : Number(toIndexInt(fromV));
  let b = toV === undefined ? length : Number(toIndexInt(toV));
  if (a < 0) a += length;
  if (a < 0) a = 0;
  if (b < 0) b += length;
  if (b < 0) b = 0;
  if (b > length) b = length;
  if (a > b) a = b;
  if (typeof v === "string") return sliceBytes(v, a, b);
  return v.slice(a, b) as Value;
}

/** Go's ToBool for `&&`, `||`, `!` and conditions on dynamic values. */
export function toBool(v: Value, op: string): boolean {
  if (v === true || v === false) return v;
  throw new FilterRuntimeError(`invalid operation: ${op} on ${goTypeName(v)} (expected bool)`);
}
