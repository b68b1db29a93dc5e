/** Conversion builtins: len, type, int, float, string, toJSON, fromJSON, toBase64, fromBase64. */
import { FilterRuntimeError } from "../errors.js";
import { formatValue } from "../runtime/format.js";
import { fromJSON, toJSON } from "../runtime/json.js";
import { decodeUtf8, runeCount } from "../runtime/utf8.js";
import {
  AnyKeyMap,
  Duration,
  floatToInt,
  GoFloat,
  GoFunc,
  GoMonth,
  GoWeekday,
  goTypeName,
  intFromBig,
  isPlainMap,
  mkFloat,
  toF,
  type Value,
} from "../runtime/values.js";
import { GoTime } from "../time/go-time.js";
import { Location } from "../time/zones.js";
import {
  FLOAT,
  goKind,
  INT,
  isArray,
  isMap,
  isString,
  isUnknown,
  STRING,
  type Type,
  UNKNOWN,
} from "../types.js";
import { argName, CheckError, expectCount, overloads } from "./signature.js";
import { str } from "./strings.js";
import type { Builtin } from "./types.js";

const INT_KINDS = new Set(["int", "int64", "float"]);

/** Go strconv.Atoi (base 10, optional sign, int64 range). */
function atoi(s: string): Value {
  if (!/^[+-]?[0-9]+$/.test(s))
    throw new FilterRuntimeError(`strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
  const b = BigInt(s);
  if (b > 9223372036854775807n || b < -9223372036854775808n) {
    throw new FilterRuntimeError(`strconv.Atoi: parsing ${JSON.stringify(s)}: value out of range`);
  }
  return intFromBig(b);
}

/** Go strconv.ParseFloat(s, 64), including inf/nan and hexadecimal floats. */
export function parseFloatGo(s: string): number {
  const err = (why: string) =>
    new FilterRuntimeError(`strconv.ParseFloat: parsing ${JSON.stringify(s)}: ${why}`);
  if (/^[+-]?(inf|infinity)$/i.test(s))
    return s.startsWith("-") ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  if (/^[+-]?nan$/i.test(s)) return Number.NaN;
  const dec =
    /^[+-]?(?:[0-9](?:_?[0-9])*\.?(?:[0-9](?:_?[0-9])*)?|\.[0-9](?:_?[0-9])*)(?:[eE][+-]?[0-9](?:_?[0-9])*)?$/;
  if (dec.test(s) && !s.includes("_")) {
    const v = Number(s);
    if (!Number.isFinite(v)) throw err("value out of range");
    return v;
  }
  const hex = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?[0-9]+)$/.exec(s);
  if (hex && ((hex[2] ?? "") !== "" || (hex[3] ?? "") !== "")) {
    const mant = (hex[2] ?? "") + (hex[3] ?? "");
    const fracDigits = (hex[3] ?? "").length;
    let v = 0;
    for (const ch of mant) v = v * 16 + Number.parseInt(ch, 16);
    v = v * 2 ** (Number(hex[4]) - 4 * fracDigits);
    if (!Number.isFinite(v)) throw err("value out of range");
    return hex[1] === "-" ? -v : v;
  }
  throw err("invalid syntax");
}

function typeName(v: Value): string {
  if (v === null || v === undefined) return "nil";
  switch (typeof v) {
    case "boolean":
      return "bool";
    case "number":
      return Number.isInteger(v) && !Object.is(v, -0) ? "int" : "float";
    case "bigint":
      return "int";
    case "string":
      return "string";
  }
  if (v instanceof GoFloat) return "float";
  if (Array.isArray(v) || v instanceof Uint8Array) return "array";
  if (v instanceof GoTime) return "time.Time";
  if (v instanceof Duration) return "time.Duration";
  if (v instanceof GoMonth) return "time.Month";
  if (v instanceof GoWeekday) return "time.Weekday";
  if (v instanceof GoFunc) return "func";
  if (v instanceof Location) return "unknown";
  if (v instanceof AnyKeyMap || isPlainMap(v)) return "map";
  return "unknown";
}

function length(v: Value): number {
  if (typeof v === "string") return runeCount(v);
  if (Array.isArray(v) || v instanceof Uint8Array) return v.length;
  if (v instanceof AnyKeyMap) return v.size;
  if (isPlainMap(v)) {
    let n = 0;
    for (const k in v) if (Object.hasOwn(v, k)) n++;
    return n;
  }
  throw new FilterRuntimeError(`invalid argument for len (type ${goTypeName(v)})`);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const CONVERSION_BUILTINS: Record<string, Builtin> = {
  len: {
    check: (args) => {
      expectCount(args, 1);
      const t = args[0] as Type;
      if (isArray(t) || isMap(t) || isString(t) || isUnknown(t)) return INT;
      throw new CheckError(`invalid argument for len (type ${argName(t)})`);
    },
    call: (_c, a) => length(a[0] ?? null),
  },
  type: {
    check: (args) => {
      expectCount(args, 1);
      return STRING;
    },
    call: (_c, a) => typeName(a[0] ?? null),
  },
  int: {
    check: (args) => {
      expectCount(args, 1);
      const t = args[0] as Type;
      if (isUnknown(t) || isString(t) || INT_KINDS.has(goKind(t))) return INT;
      throw new CheckError(`invalid argument for int (type ${argName(t)})`);
    },
    call: (_c, a) => {
      const v = a[0] ?? null;
      if (typeof v === "number") return Number.isInteger(v) && !Object.is(v, -0) ? v : floatToInt(v);
      if (typeof v === "bigint") return v;
      if (v instanceof GoFloat) return floatToInt(v.v);
      if (typeof v === "string") return atoi(v);
      if (v instanceof Duration) return v.ns;
      if (v instanceof GoMonth || v instanceof GoWeekday) return v.n;
      throw new FilterRuntimeError(`invalid operation: int(${goTypeName(v)})`);
    },
  },
  float: {
    check: (args) => {
      expectCount(args, 1);
      const t = args[0] as Type;
      if (isUnknown(t) || isString(t) || INT_KINDS.has(goKind(t))) return FLOAT;
      throw new CheckError(`invalid argument for float (type ${argName(t)})`);
    },
    call: (_c, a) => {
      const v = a[0] ?? null;
      if (typeof v === "number" || typeof v === "bigint" || v instanceof GoFloat) return mkFloat(toF(v));
      if (typeof v === "string") return mkFloat(parseFloatGo(v));
      if (v instanceof Duration) return mkFloat(toF(v.ns));
      if (v instanceof GoMonth || v instanceof GoWeekday) return mkFloat(v.n);
      throw new FilterRuntimeError(`invalid operation: float(${goTypeName(v)})`);
    },
  },
  string: {
    check: (args) => overloads("string", [["any"]], STRING, args),
    call: (_c, a) => formatValue(a[0] ?? null),
  },
  toJSON: {
    check: (args) => overloads("toJSON", [["any"]], STRING, args),
    call: (_c, a) => toJSON(a[0] ?? null),
  },
  fromJSON: {
    check: (args) => overloads("fromJSON", [[STRING]], UNKNOWN, args),
    call: (_c, a) => fromJSON(str(a[0], "fromJSON")),
  },
  toBase64: {
    check: (args) => overloads("toBase64", [[STRING]], STRING, args),
    call: (_c, a) => Buffer.from(str(a[0], "toBase64"), "utf8").toString("base64"),
  },
  fromBase64: {
    check: (args) => overloads("fromBase64", [[STRING]], STRING, args),
    call: (_c, a) => {
      const s = str(a[0], "fromBase64").replace(/[\r\n]/g, "");
      if (!BASE64.test(s)) throw new FilterRuntimeError("illegal base64 data at input byte 0");
      return decodeUtf8(Buffer.from(s, "base64"));
    },
  },
};
