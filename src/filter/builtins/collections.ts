/** Array and map builtins: first, last, get, take, keys, values, concat, flatten, uniq, sort, ... */
import { FilterRuntimeError } from "../errors.js";
import type { Ctx } from "../runtime/context.js";
import { equal, fetch, less } from "../runtime/ops.js";
import {
  AnyKeyMap,
  GoFloat,
  goTypeName,
  isPlainMap,
  NIL_SLICE,
  PAIRS_ARRAY,
  type PlainMap,
  toIndexInt,
  type Value,
} from "../runtime/values.js";
import {
  ANY_ARRAY,
  ANY_KEY_MAP,
  arrayOf,
  elemOf,
  isArray,
  isMap,
  isString,
  isUnknown,
  keyOf,
  type Type,
  UNKNOWN,
} from "../types.js";
import { argName, CheckError, expectCount } from "./signature.js";
import type { Builtin } from "./types.js";

const MAX_DEPTH = 10000;

function arrayCheck(name: string, result: (t: Type) => Type, what: string) {
  return (args: Type[]): Type => {
    expectCount(args, 1);
    const t = args[0] as Type;
    if (isUnknown(t)) return result(t);
    if (isArray(t)) return result(t);
    throw new CheckError(`${what} ${argName(t)}`.replace("%NAME%", name));
  };
}

function mapCheck(what: string, result: (t: Type) => Type) {
  return (args: Type[]): Type => {
    expectCount(args, 1);
    const t = args[0] as Type;
    if (isUnknown(t)) return ANY_ARRAY;
    if (isMap(t)) return result(t);
    throw new CheckError(`${what} ${argName(t)}`);
  };
}

export function asArray(v: Value, what: string): Value[] {
  if (Array.isArray(v)) return v;
  if (v instanceof Uint8Array) return Array.from(v);
  throw new FilterRuntimeError(`${what} ${goTypeName(v)}`);
}

function mapEntries(v: Value, what: string): [Value, Value][] {
  if (v instanceof AnyKeyMap) return [...v.entries.values()];
  if (isPlainMap(v)) {
    const m = v as PlainMap;
    return Object.keys(m).map((k) => [k, m[k]] as [Value, Value]);
  }
  throw new FilterRuntimeError(`${what} ${goTypeName(v)}`);
}

function flattenInto(c: Ctx, arr: Value[], depth: number, out: Value[]): void {
  if (depth > MAX_DEPTH) throw new FilterRuntimeError("recursion depth exceeded");
  for (const v of arr) {
    if (Array.isArray(v)) flattenInto(c, v, depth + 1, out);
    else {
      c.work(1);
      out.push(v);
    }
  }
}

/** A hash key that is consistent with runtime equality for primitive values, or undefined. */
function primitiveKey(v: Value): string | undefined {
  if (v === null || v === undefined) return "n";
  switch (typeof v) {
    case "number":
      return Number.isNaN(v) ? undefined : `#${v === 0 ? 0 : v}`;
    case "bigint":
      return `#${v}`;
    case "string":
      return `s${v}`;
    case "boolean":
      return v ? "t" : "f";
  }
  if (v instanceof GoFloat) return `#${v.v === 0 ? 0 : v.v}`;
  return undefined;
}

/** Sorts with the `<` of the language; mixed kinds are a runtime error. */
export function sortValues(c: Ctx, arr: Value[], desc: boolean): Value[] {
  c.work(arr.length * Math.max(1, Math.ceil(Math.log2(arr.length + 1))));
  return arr.sort((a, b) => {
    if (less(a, b)) return desc ? 1 : -1;
    if (less(b, a)) return desc ? -1 : 1;
    return 0;
  });
}

export function sortOrder(v: Value): boolean {
  if (typeof v !== "string")
    throw new FilterRuntimeError(`interface conversion: interface {} is ${goTypeName(v)}, not string`);
  if (v === "asc") return false;
  if (v === "desc") return true;
  throw new FilterRuntimeError(`invalid order ${v}, expected asc or desc`);
}

export const COLLECTION_BUILTINS: Record<string, Builtin> = {
  first: {
    check: arrayCheck("first", (t) => (isUnknown(t) ? UNKNOWN : elemOf(t)), "cannot get first element from"),
    call: (_c, a) => {
      try {
        return fetch(a[0] ?? null, 0);
      } catch {
        return null;
      }
    },
  },
  last: {
    check: arrayCheck("last", (t) => (isUnknown(t) ? UNKNOWN : elemOf(t)), "cannot get last element from"),
    call: (_c, a) => {
      try {
        return fetch(a[0] ?? null, -1);
      } catch {
        return null;
      }
    },
  },
  take: {
    check: (args) => {
      expectCount(args, 2);
      const t = args[0] as Type;
      if (!isArray(t) && !isUnknown(t)) throw new CheckError(`cannot take from ${argName(t)}`);
      const n = args[1] as Type;
      if (n.k !== "int" && !isUnknown(n)) throw new CheckError(`cannot take ${argName(n)} elements`);
      return t;
    },
    call: (_c, a) => {
      const v = a[0] ?? null;
      if (!Array.isArray(v) && !(v instanceof Uint8Array))
        throw new FilterRuntimeError(`cannot take from ${goTypeName(v)}`);
      const n = Number(toIndexInt(a[1] ?? null));
      if (n < 0) throw new FilterRuntimeError(`slice bounds out of range [:${n}]`);
      return v.slice(0, Math.min(n, v.length)) as Value;
    },
  },
  keys: {
    check: mapCheck("cannot get keys from", (t) => arrayOf(keyOf(t))),
    call: (_c, a) => mapEntries(a[0] ?? null, "cannot get keys from").map((e) => e[0]),
  },
  values: {
    check: mapCheck("cannot get values from", (t) => arrayOf(elemOf(t))),
    call: (_c, a) => mapEntries(a[0] ?? null, "cannot get values from").map((e) => e[1]),
  },
  toPairs: {
    check: mapCheck("cannot transform", () => arrayOf(ANY_ARRAY)),
    call: (_c, a) => {
      const pairs: Value[] = mapEntries(a[0] ?? null, "cannot transform").map((e) => [e[0], e[1]]);
      Object.defineProperty(pairs, PAIRS_ARRAY, { value: true });
      return pairs;
    },
  },
  fromPairs: {
    check: (args) => {
      expectCount(args, 1);
      const t = args[0] as Type;
      if (!isArray(t) && !isUnknown(t)) throw new CheckError(`cannot transform ${argName(t)} from pairs`);
      return ANY_KEY_MAP;
    },
    call: (c, a) => {
      const arr = asArray(a[0] ?? null, "cannot transform from pairs");
      c.work(arr.length);
      const m = new AnyKeyMap();
      for (const p of arr) {
        if (!Array.isArray(p) || p.length !== 2) throw new FilterRuntimeError("invalid pair");
        m.set(p[0], p[1]);
      }
      return m;
    },
  },
  concat: {
    check: (args) => {
      if (args.length === 0) throw new CheckError("not enough arguments to call concat");
      for (const t of args) {
        if (!isArray(t) && !isUnknown(t)) throw new CheckError(`cannot concat ${argName(t)}`);
      }
      return ANY_ARRAY;
    },
    call: (c, a) => {
      const out: Value[] = [];
      for (const v of a) {
        const arr = asArray(v, "cannot concat");
        c.grow(arr.length);
        for (const x of arr) out.push(x);
      }
      return out;
    },
  },
  flatten: {
    check: arrayCheck("flatten", () => ANY_ARRAY, "cannot flatten"),
    call: (c, a) => {
      const out: Value[] = [];
      flattenInto(c, asArray(a[0] ?? null, "cannot flatten"), 0, out);
      c.grow(out.length);
      return out;
    },
  },
  uniq: {
    check: arrayCheck("uniq", () => ANY_ARRAY, "cannot uniq"),
    call: (c, a) => {
      const arr = asArray(a[0] ?? null, "cannot uniq");
      const seen = new Set<string>();
      const others: Value[] = [];
      const out: Value[] = [];
      for (const v of arr) {
        c.work(1);
        const k = primitiveKey(v);
        if (k !== undefined) {
          if (seen.has(k)) continue;
          seen.add(k);
        } else {
          // Non-primitive values compare with runtime equality, linearly.
          c.work(others.length);
          if (others.some((o) => equal(v, o))) continue;
          others.push(v);
        }
        out.push(v);
      }
      return out;
    },
  },
  reverse: {
    check: arrayCheck("reverse", () => ANY_ARRAY, "cannot reverse"),
    call: (c, a) => {
      const arr = asArray(a[0] ?? null, "cannot reverse");
      c.grow(arr.length);
      return arr.slice().reverse();
    },
  },
  sort: {
    check: (args) => {
      if (args.length !== 1 && args.length !== 2) {
        throw new CheckError(`invalid number of arguments (expected 1 or 2, got ${args.length})`);
      }
      const t = args[0] as Type;
      if (!isArray(t) && !isUnknown(t))
        throw new CheckError(`invalid argument for sort (type ${argName(t)})`);
      if (args.length === 2) {
        const o = args[1] as Type;
        if (!isString(o) && !isUnknown(o))
          throw new CheckError(`invalid argument for sort (type ${argName(o)})`);
      }
      return ANY_ARRAY;
    },
    call: (c, a) => {
      const desc = a.length > 1 ? sortOrder(a[1] ?? null) : false;
      // Upstream sorts only `[]any` and slices of scalars; anything else (a string, a map, nil,
      // toPairs' pairs) gives a nil slice.
      if (!Array.isArray(a[0]) || PAIRS_ARRAY in a[0]) return NIL_SLICE;
      const arr = a[0].slice();
      c.grow(arr.length);
      return sortValues(c, arr, desc);
    },
  },
};
