/** Number builtins: abs, ceil, floor, round, max, min, mean, median and the bitwise functions. */
import { FilterRuntimeError } from "../errors.js";
import type { Ctx } from "../runtime/context.js";
import { less, more } from "../runtime/ops.js";
import {
  GoFloat,
  goTypeName,
  type Int,
  intFromBig,
  intNeg,
  isIntValue,
  mkFloat,
  toF,
  type Value,
} from "../runtime/values.js";
import { FLOAT, INT, isArray, isNumber, isUnknown, type Type, UNKNOWN } from "../types.js";
import { argName, CheckError, expectCount, overloads } from "./signature.js";
import type { Builtin } from "./types.js";

const MAX_DEPTH = 10000;

function isNumeric(v: Value): boolean {
  return typeof v === "number" || typeof v === "bigint" || v instanceof GoFloat;
}

function numberCheck(name: string, result: (t: Type) => Type) {
  return (args: Type[]): Type => {
    expectCount(args, 1);
    const t = args[0] as Type;
    if (isNumber(t) || isUnknown(t)) return result(t);
    throw new CheckError(`invalid argument for ${name} (type ${argName(t)})`);
  };
}

function toFloatArg(v: Value, name: string): number {
  if (isNumeric(v)) return toF(v);
  throw new FilterRuntimeError(`invalid argument for ${name} (type ${goTypeName(v)})`);
}

/** Go math.Round: half away from zero. */
export function goRound(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/**
 * Upstream's static type of max, min, mean and median: unknown as soon as an argument is an array
 * or unknown (the arguments after it are not checked), otherwise the type of the first argument,
 * even for mean and median, whose run-time value is a float (see `runtimeTypeOf`).
 */
function aggregateCheck(name: string) {
  return (args: Type[]): Type => {
    if (args.length === 0) throw new CheckError(`not enough arguments to call ${name}`);
    for (const t of args) {
      if (isUnknown(t) || isArray(t)) return UNKNOWN;
      if (!isNumber(t)) throw new CheckError(`invalid argument for ${name} (type ${argName(t)})`);
    }
    return args[0] as Type;
  };
}

const invalid = (name: string, v: Value) =>
  new FilterRuntimeError(`invalid argument for ${name} (type ${goTypeName(v)})`);

/** Keeps the larger (max) or smaller (min) of the current best and a candidate; ties keep the first. */
type Better = (cur: Value, cand: Value) => boolean;

/**
 * max/min over numbers and (nested) arrays of numbers; an empty input gives nil. A single
 * argument that is neither a number nor an array is returned as it is (`max("a")` is "a");
 * among several arguments, or inside an array, it is an error.
 */
function minMax(c: Ctx, name: string, better: Better, depth: number, args: Value[]): Value {
  if (depth > MAX_DEPTH) throw new FilterRuntimeError("recursion depth exceeded");
  let val: Value = null;
  const consider = (v: Value) => {
    if (v !== null && v !== undefined && (val === null || better(val, v))) val = v;
  };
  for (const arg of args) {
    if (Array.isArray(arg)) {
      c.work(arg.length);
      for (const el of arg as Value[]) {
        if (isNumeric(el)) consider(el);
        else if (Array.isArray(el) || el instanceof Uint8Array)
          consider(minMax(c, name, better, depth + 1, [el]));
        else throw invalid(name, el);
      }
    } else if (arg instanceof Uint8Array) {
      c.work(arg.length);
      for (const el of arg) consider(el);
    } else if (isNumeric(arg)) {
      consider(arg);
    } else if (args.length === 1) {
      return arg;
    } else {
      throw invalid(name, arg);
    }
  }
  return val;
}

/** Flattens numbers for mean/median. */
function collectNumbers(c: Ctx, name: string, depth: number, args: Value[], out: number[]): void {
  if (depth > MAX_DEPTH) throw new FilterRuntimeError("recursion depth exceeded");
  for (const arg of args) {
    if (Array.isArray(arg) || arg instanceof Uint8Array) {
      c.work(arg.length);
      collectNumbers(c, name, depth + 1, Array.from(arg as ArrayLike<Value>), out);
    } else if (isNumeric(arg)) {
      out.push(toF(arg));
    } else {
      throw new FilterRuntimeError(`invalid argument for ${name} (type ${goTypeName(arg)})`);
    }
  }
}

function big(v: Value, name: string): bigint {
  if (isIntValue(v)) return BigInt(v);
  throw new FilterRuntimeError(`invalid argument for ${name} (type ${goTypeName(v)})`);
}

const bits2 = (name: string, f: (a: bigint, b: bigint) => bigint): Builtin => ({
  check: (args) => overloads(name, [[INT, INT]], INT, args),
  call: (_c, a) => intFromBig(f(big(a[0], name), big(a[1], name))),
});

function shiftCount(v: Value, name: string): bigint {
  const n = big(v, name);
  if (n < 0n) throw new FilterRuntimeError(`invalid operation: negative shift count ${n} (type int)`);
  return n;
}

export const MATH_BUILTINS: Record<string, Builtin> = {
  abs: {
    check: numberCheck("abs", (t) => t),
    call: (_c, a) => {
      const v = a[0] ?? null;
      if (isIntValue(v)) return (v as Int) < 0 ? intNeg(v as Int) : v;
      if (isNumeric(v)) return mkFloat(Math.abs(toF(v)));
      throw new FilterRuntimeError(`invalid argument for abs (type ${goTypeName(v)})`);
    },
  },
  ceil: {
    check: numberCheck("ceil", () => FLOAT),
    call: (_c, a) => mkFloat(Math.ceil(toFloatArg(a[0], "ceil"))),
  },
  floor: {
    check: numberCheck("floor", () => FLOAT),
    call: (_c, a) => mkFloat(Math.floor(toFloatArg(a[0], "floor"))),
  },
  round: {
    check: numberCheck("round", () => FLOAT),
    call: (_c, a) => mkFloat(goRound(toFloatArg(a[0], "round"))),
  },
  max: {
    check: aggregateCheck("max"),
    call: (c, a) => minMax(c, "max", (cur, cand) => less(cur, cand), 0, a),
  },
  min: {
    check: aggregateCheck("min"),
    call: (c, a) => minMax(c, "min", (cur, cand) => more(cur, cand), 0, a),
  },
  mean: {
    check: aggregateCheck("mean"),
    call: (c, a) => {
      const xs: number[] = [];
      collectNumbers(c, "mean", 0, a, xs);
      if (xs.length === 0) return new GoFloat(0);
      let sum = 0;
      for (const x of xs) sum += x;
      return mkFloat(sum / xs.length);
    },
  },
  median: {
    check: aggregateCheck("median"),
    call: (c, a) => {
      const xs: number[] = [];
      collectNumbers(c, "median", 0, a, xs);
      if (xs.length === 0) return new GoFloat(0);
      xs.sort((x, y) => x - y);
      const mid = xs.length >> 1;
      if (xs.length % 2 === 0) return mkFloat(((xs[mid - 1] as number) + (xs[mid] as number)) / 2);
      return mkFloat(xs[mid] as number);
    },
  },
  bitand: bits2("bitand", (a, b) => a & b),
  bitor: bits2("bitor", (a, b) => a | b),
  bitxor: bits2("bitxor", (a, b) => a ^ b),
  bitnand: bits2("bitnand", (a, b) => a & ~b),
  bitnot: {
    check: (args) => overloads("bitnot", [[INT]], INT, args),
    call: (_c, a) => intFromBig(~big(a[0], "bitnot")),
  },
  bitshl: {
    check: (args) => overloads("bitshl", [[INT, INT]], INT, args),
    call: (_c, a) => {
      const x = big(a[0], "bitshl");
      const n = shiftCount(a[1], "bitshl");
      return n >= 64n ? 0 : intFromBig(x << n);
    },
  },
  bitshr: {
    check: (args) => overloads("bitshr", [[INT, INT]], INT, args),
    call: (_c, a) => {
      const x = big(a[0], "bitshr");
      const n = shiftCount(a[1], "bitshr");
      if (n >= 64n) return x < 0n ? -1 : 0;
      return intFromBig(x >> n);
    },
  },
  bitushr: {
    check: (args) => overloads("bitushr", [[INT, INT]], INT, args),
    call: (_c, a) => {
      const x = BigInt.asUintN(64, big(a[0], "bitushr"));
      const n = shiftCount(a[1], "bitushr");
      if (n >= 64n) return 0;
      return intFromBig(x >> n);
    },
  },
};
