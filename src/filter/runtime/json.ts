/**
 * toJSON / fromJSON with Go encoding/json conventions (sorted keys, HTML escaping, every number
 * decoded as float64).
 */
import { FilterRuntimeError } from "../errors.js";
import { GoTime } from "../time/go-time.js";
import { formatTime, LAYOUTS } from "../time/go-time-layout.js";
import { compareStrings } from "./utf8.js";
import {
  AnyKeyMap,
  Duration,
  GoFloat,
  GoMonth,
  GoWeekday,
  goTypeName,
  isPlainMap,
  NIL_SLICE,
  type PlainMap,
  type Value,
} from "./values.js";

function quoteJson(s: string): string {
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let esc: string | undefined;
    if (c < 0x20 || c === 0x22 || c === 0x5c || c === 0x3c || c === 0x3e || c === 0x26) {
      switch (c) {
        case 0x22:
          esc = '\\"';
          break;
        case 0x5c:
          esc = "\\\\";
          break;
        case 0x0a:
          esc = "\\n";
          break;
        case 0x0d:
          esc = "\\r";
          break;
        case 0x09:
          esc = "\\t";
          break;
        default:
          esc = `\\u00${c.toString(16).padStart(2, "0")}`;
      }
    } else if (c === 0x2028 || c === 0x2029) {
      esc = `\\u${c.toString(16)}`;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      // Lone surrogates are not valid UTF-8: Go writes U+FFFD.
      const hi =
        c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff;
      if (hi) {
        i++;
        continue;
      }
      esc = "\ufffd";
    }
    if (esc !== undefined) {
      out += s.slice(start, i) + esc;
      start = i + 1;
    }
  }
  return `${out + s.slice(start)}"`;
}

function jsonFloat(f: number): string {
  if (!Number.isFinite(f)) throw new FilterRuntimeError(`json: unsupported value: ${formatNonFinite(f)}`);
  if (Object.is(f, -0)) return "-0";
  // encoding/json uses the same thresholds as ECMAScript.
  return String(f);
}

function formatNonFinite(f: number): string {
  if (Number.isNaN(f)) return "NaN";
  return f > 0 ? "+Inf" : "-Inf";
}

function encode(v: Value, indent: string): string {
  if (v === null || v === undefined) return "null";
  switch (typeof v) {
    case "boolean":
      return v ? "true" : "false";
    case "number":
      return Number.isInteger(v) && !Object.is(v, -0) ? String(v) : jsonFloat(v);
    case "bigint":
      return v.toString();
    case "string":
      return quoteJson(v);
  }
  if (v instanceof GoFloat) return jsonFloat(v.v);
  const inner = `${indent}  `;
  if (Array.isArray(v)) {
    if (v === NIL_SLICE) return "null";
    if (v.length === 0) return "[]";
    return `[\n${v.map((x) => inner + encode(x, inner)).join(",\n")}\n${indent}]`;
  }
  if (v instanceof Uint8Array) return quoteJson(Buffer.from(v).toString("base64"));
  if (v instanceof GoTime) return quoteJson(formatTime(v, LAYOUTS.RFC3339Nano));
  if (v instanceof Duration) return v.ns.toString();
  if (v instanceof GoMonth || v instanceof GoWeekday) return String(v.n);
  if (v instanceof AnyKeyMap)
    throw new FilterRuntimeError("json: unsupported type: map[interface {}]interface {}");
  if (isPlainMap(v)) {
    const m = v as PlainMap;
    const keys = Object.keys(m).sort(compareStrings);
    if (keys.length === 0) return "{}";
    return `{\n${keys.map((k) => `${inner}${quoteJson(k)}: ${encode(m[k], inner)}`).join(",\n")}\n${indent}}`;
  }
  if (goTypeName(v) === "*time.Location") return "{}";
  throw new FilterRuntimeError(`json: unsupported type: ${goTypeName(v)}`);
}

/** Go json.MarshalIndent(v, "", "  "). */
export function toJSON(v: Value): string {
  return encode(v, "");
}

/**
 * Converts a value from JSON.parse to the language's representation in place: every number becomes
 * a float. Apply it once per value (a converted float box would be converted again).
 */
export function floatJson(v: unknown): Value {
  return floatify(v);
}

/** Replaces every JSON number by a float value, in place (objects come from JSON.parse). */
function floatify(v: unknown): Value {
  if (typeof v === "number") {
    if (!Number.isFinite(v))
      throw new FilterRuntimeError("json: cannot unmarshal number into Go value of type float64");
    return Number.isInteger(v) ? new GoFloat(v) : v;
  }
  if (v === null || typeof v !== "object") return v as Value;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x === "number" || (typeof x === "object" && x !== null)) v[i] = floatify(x);
    }
    return v as Value[];
  }
  const o = v as Record<string, unknown>;
  for (const k in o) {
    const x = o[k];
    if (typeof x === "number" || (typeof x === "object" && x !== null)) o[k] = floatify(x);
  }
  return o as PlainMap;
}

function reviveFloat(_key: string, v: unknown): unknown {
  if (typeof v === "number") {
    if (!Number.isFinite(v))
      throw new FilterRuntimeError("json: cannot unmarshal number into Go value of type float64");
    return Number.isInteger(v) ? new GoFloat(v) : v;
  }
  return v;
}

/** Go json.Unmarshal into `any`: objects, arrays, strings, bools, nil, and float64 numbers. */
export function fromJSON(text: string): Value {
  let parsed: unknown;
  try {
    // A reviver is slower but safe with a "__proto__" key; the in-place walk is not.
    if (text.includes("__proto__")) return JSON.parse(text, reviveFloat) as Value;
    parsed = JSON.parse(text);
  } catch (e) {
    if (e instanceof FilterRuntimeError) throw e;
    throw new FilterRuntimeError(`invalid character in JSON: ${(e as Error).message}`);
  }
  return floatify(parsed);
}
