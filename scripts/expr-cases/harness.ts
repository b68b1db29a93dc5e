/**
 * Runs expr conformance cases (the JSONL format of shared/conformance/expr/README.md): decodes
 * the value encoding, compiles and runs each case, and compares encoded results.
 */
import { readFileSync } from "node:fs";
import {
  AnyKeyMap,
  type CompileOptions,
  compile,
  Duration,
  FilterCompileError,
  FilterRuntimeError,
  GoFloat,
  GoMonth,
  GoTime,
  GoWeekday,
  inferEnvTypes,
  Location,
  type Value,
} from "../../src/filter/index.js";
import { NIL_SLICE } from "../../src/filter/runtime/values.js";
import { formatTime, LAYOUTS, parseTime } from "../../src/filter/time/go-time-layout.js";

/** One line of a case file. */
export interface ExprCase {
  expr: string;
  env: unknown;
  expect: unknown;
  source?: string;
  options?: Record<string, unknown>;
  message?: string;
  test?: string;
  note?: string;
}

export interface CaseResult {
  case: ExprCase;
  line: number;
  ok: boolean;
  /** Encoded value or error marker that was obtained. */
  got: unknown;
  /** Error message, when the run or compile failed. */
  error?: string;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function singleKey(o: Record<string, unknown>, key: string): boolean {
  const keys = Object.keys(o);
  return keys.length === 1 && keys[0] === key;
}

function decodeFloat(x: unknown): Value {
  if (x === "NaN") return Number.NaN;
  if (x === "+Inf") return Number.POSITIVE_INFINITY;
  if (x === "-Inf") return Number.NEGATIVE_INFINITY;
  const n = Number(x);
  return Number.isInteger(n) ? new GoFloat(n) : n;
}

function decodeInt(s: string): Value {
  const b = BigInt(s);
  return b >= -9007199254740991n && b <= 9007199254740991n ? Number(b) : b;
}

/** Decodes the value encoding into runtime values. */
export function decodeValue(v: unknown): Value {
  if (v === null) return null;
  if (typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "number") return Number.isInteger(v) ? v : v;
  if (Array.isArray(v)) return v.map(decodeValue);
  if (isObject(v)) {
    if (singleKey(v, "$float")) return decodeFloat(v.$float);
    if (singleKey(v, "$int")) return decodeInt(String(v.$int));
    if (singleKey(v, "$time")) return parseTime(LAYOUTS.RFC3339Nano, String(v.$time));
    if (singleKey(v, "$duration_ns")) {
      const ns = v.$duration_ns;
      return new Duration(
        typeof ns === "number" ? ns : (decodeInt(String(isObject(ns) ? ns.$int : ns)) as number),
      );
    }
    if (singleKey(v, "$bytes")) return Uint8Array.from(v.$bytes as number[]);
    if (singleKey(v, "$map")) {
      const m = new AnyKeyMap();
      for (const [k, val] of v.$map as [unknown, unknown][]) m.set(decodeValue(k), decodeValue(val));
      return m;
    }
    const out: Record<string, Value> = {};
    for (const k of Object.keys(v)) {
      const val = decodeValue(v[k]);
      if (k === "__proto__")
        Object.defineProperty(out, k, { value: val, enumerable: true, writable: true, configurable: true });
      else out[k] = val;
    }
    return out;
  }
  throw new Error(`cannot decode ${String(v)}`);
}

function encodeInt(v: number | bigint): Json {
  if (typeof v === "number") return v;
  return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : { $int: v.toString() };
}

function encodeFloat(f: number): Json {
  if (Number.isNaN(f)) return { $float: "NaN" };
  if (f === Number.POSITIVE_INFINITY) return { $float: "+Inf" };
  if (f === Number.NEGATIVE_INFINITY) return { $float: "-Inf" };
  return Number.isInteger(f) ? { $float: f } : f;
}

/** Encodes a runtime value into the case encoding. */
export function encodeValue(v: Value): Json {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case "boolean":
    case "string":
      return v;
    case "number":
      return Number.isInteger(v) && !Object.is(v, -0) ? v : encodeFloat(v);
    case "bigint":
      return encodeInt(v);
  }
  if (v instanceof GoFloat) return encodeFloat(v.v);
  if (v === NIL_SLICE) return null;
  if (Array.isArray(v)) return v.map(encodeValue);
  if (v instanceof Uint8Array) return { $bytes: Array.from(v) };
  if (v instanceof GoTime) return { $time: formatTime(v, LAYOUTS.RFC3339Nano) };
  if (v instanceof Duration) return { $duration_ns: encodeInt(v.ns) };
  if (v instanceof GoMonth || v instanceof GoWeekday) return v.n;
  if (v instanceof Location) return { $location: v.name };
  if (v instanceof AnyKeyMap) {
    const entries = [...v.entries.values()];
    if (!v.grouped && entries.every(([k]) => typeof k === "string")) {
      const o: Record<string, Json> = {};
      for (const [k, val] of entries) o[k as string] = encodeValue(val);
      return o;
    }
    const pairs = entries.map(([k, val]) => [encodeValue(k), encodeValue(val)] as [Json, Json]);
    pairs.sort((a, b) => (JSON.stringify(a[0]) < JSON.stringify(b[0]) ? -1 : 1));
    return { $map: pairs };
  }
  if (typeof v === "object") {
    const o: Record<string, Json> = {};
    for (const k of Object.keys(v)) o[k] = encodeValue((v as Record<string, Value>)[k]);
    return o;
  }
  return { $unsupported: String(v) };
}

/** Structural equality of encoded values; object key order does not matter. */
export function sameEncoding(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === "number" && typeof b === "number") return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameEncoding(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.hasOwn(b, k) && sameEncoding(a[k], b[k]));
  }
  return false;
}

function compileOptions(c: ExprCase, env: Value): CompileOptions {
  const o = c.options ?? {};
  const opts: CompileOptions = {};
  if (c.env !== null && !o.untypedEnv) opts.env = inferEnvTypes(env as Record<string, Value>);
  if (typeof o.expect === "string") opts.expect = o.expect as CompileOptions["expect"];
  if (o.warnOnAny === true) opts.warnOnAny = true;
  if (o.allowUndefinedVariables === true) opts.allowUndefinedVariables = true;
  if (o.optimize === false) opts.optimize = false;
  if (typeof o.maxNodes === "number") opts.maxNodes = o.maxNodes;
  if (o.disableIfOperator === true) opts.disableIfOperator = true;
  if (o.shortCircuit === false) opts.shortCircuit = false;
  if (Array.isArray(o.disabledBuiltins)) opts.disabledBuiltins = o.disabledBuiltins as string[];
  return opts;
}

function isErrorMarker(v: unknown): v is { error: "compile" | "runtime" } {
  return isObject(v) && singleKey(v, "error");
}

/** Runs one case. */
export function runCase(c: ExprCase, line: number): CaseResult {
  const env = c.env === null ? null : decodeValue(c.env);
  const expectError = isErrorMarker(c.expect) ? c.expect.error : undefined;
  let program: ReturnType<typeof compile>;
  try {
    program = compile(c.expr, compileOptions(c, env));
  } catch (e) {
    const ok = e instanceof FilterCompileError && expectError === "compile";
    const kind = e instanceof FilterCompileError ? "compile" : `unexpected ${(e as Error)?.name}`;
    return { case: c, line, ok, got: { error: kind }, error: (e as Error)?.message };
  }
  let value: Value;
  try {
    value = program.run(env as Record<string, Value> | null);
  } catch (e) {
    const ok = e instanceof FilterRuntimeError && expectError === "runtime";
    const kind = e instanceof FilterRuntimeError ? "runtime" : `unexpected ${(e as Error)?.name}`;
    return { case: c, line, ok, got: { error: kind }, error: (e as Error)?.message };
  }
  const got = encodeValue(value);
  return { case: c, line, ok: expectError === undefined && sameEncoding(got, c.expect), got };
}

/** Parses a JSONL case file (blank lines are skipped). */
export function readCases(path: string): { line: number; case: ExprCase }[] {
  const out: { line: number; case: ExprCase }[] = [];
  readFileSync(path, "utf8")
    .split("\n")
    .forEach((text, i) => {
      if (text.trim() === "") return;
      out.push({ line: i + 1, case: JSON.parse(text) as ExprCase });
    });
  return out;
}

/** One-line description of a failing case. */
export function describeFailure(r: CaseResult): string {
  const parts = [
    `line ${r.line}: ${JSON.stringify(r.case.expr)}`,
    `  expected: ${JSON.stringify(r.case.expect)}${r.case.message ? ` (${r.case.message})` : ""}`,
    `  got:      ${JSON.stringify(r.got)}${r.error ? ` (${r.error})` : ""}`,
  ];
  if (r.case.options) parts.push(`  options:  ${JSON.stringify(r.case.options)}`);
  return parts.join("\n");
}
