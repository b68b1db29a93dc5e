/** String builtins: trim, upper, split, replace, repeat, join, indexOf, ... */
import { FilterRuntimeError } from "../errors.js";
import { isSpace } from "../lexer.js";
import type { Ctx } from "../runtime/context.js";
import { byteIndexOf, byteLastIndexOf, byteLength, isAscii } from "../runtime/utf8.js";
import { goTypeName, toIndexInt, type Value } from "../runtime/values.js";
import { arrayOf, BOOL, INT, STRING, type Type } from "../types.js";
import { overloads, type Param } from "./signature.js";
import type { Builtin } from "./types.js";

export function str(v: Value, fn: string): string {
  if (typeof v === "string") return v;
  throw new FilterRuntimeError(
    `interface conversion: interface {} is ${goTypeName(v)}, not string (in ${fn})`,
  );
}

function int(v: Value): number {
  if (typeof v === "number" && Number.isInteger(v)) return v;
  if (typeof v === "bigint") return Number(v);
  throw new FilterRuntimeError(`interface conversion: interface {} is ${goTypeName(v)}, not int`);
}

const codePoints = (s: string): string[] => [...s];

/** Go strings.TrimFunc with unicode.IsSpace. */
function trimSpace(s: string): string {
  const cps = codePoints(s);
  let a = 0;
  let b = cps.length;
  while (a < b && isSpace((cps[a] as string).codePointAt(0) as number)) a++;
  while (b > a && isSpace((cps[b - 1] as string).codePointAt(0) as number)) b--;
  return cps.slice(a, b).join("");
}

function trimCutset(s: string, cutset: string): string {
  if (s === "" || cutset === "") return s;
  const set = new Set(codePoints(cutset));
  const cps = codePoints(s);
  let a = 0;
  let b = cps.length;
  while (a < b && set.has(cps[a] as string)) a++;
  while (b > a && set.has(cps[b - 1] as string)) b--;
  return cps.slice(a, b).join("");
}

/** unicode.ToUpper / ToLower per rune: simple (one-to-one) case mapping only. */
function mapCase(s: string, upper: boolean): string {
  if (isAscii(s)) return upper ? s.toUpperCase() : s.toLowerCase();
  let out = "";
  for (const ch of s) {
    const m = upper ? ch.toUpperCase() : ch.toLowerCase();
    if ([...m].length === 1) out += m;
    else if (!upper && ch === "\u0130") out += "i";
    else out += ch;
  }
  return out;
}

/** Go strings.genSplit. */
function genSplit(s: string, sep: string, sepSave: number, nIn: number): string[] | null {
  let n = nIn;
  if (n === 0) return null;
  if (sep === "") {
    // Explode into runes.
    const cps = codePoints(s);
    if (n < 0 || n > cps.length) n = cps.length;
    const out = cps.slice(0, n - 1);
    out.push(cps.slice(n - 1).join(""));
    if (cps.length === 0) return [];
    return out;
  }
  if (n < 0) n = Number.MAX_SAFE_INTEGER;
  const out: string[] = [];
  let start = 0;
  while (out.length < n - 1) {
    const i = s.indexOf(sep, start);
    if (i < 0) break;
    out.push(s.slice(start, i + sepSave));
    start = i + sep.length;
  }
  out.push(s.slice(start));
  return out;
}

/** Go strings.Replace. */
function replace(c: Ctx, s: string, old: string, neu: string, nIn: number): string {
  let n = nIn;
  if (old === neu || n === 0) return s;
  if (old === "") {
    const cps = codePoints(s);
    const count = cps.length + 1;
    if (n < 0 || count < n) n = count;
    c.work(n);
    if (neu.length * n > 64 * 1024 * 1024) throw new FilterRuntimeError("memory budget exceeded");
    let out = "";
    for (let i = 0; i < cps.length + 1; i++) {
      if (i < n) out += neu;
      if (i < cps.length) out += cps[i];
    }
    return out;
  }
  let out = "";
  let start = 0;
  let done = 0;
  while (n < 0 || done < n) {
    const i = s.indexOf(old, start);
    if (i < 0) break;
    out += s.slice(start, i) + neu;
    start = i + old.length;
    done++;
    if (out.length > 64 * 1024 * 1024) throw new FilterRuntimeError("memory budget exceeded");
  }
  return out + s.slice(start);
}

const S = STRING;
const sig =
  (name: string, sigs: Param[][], result: Type) =>
  (args: Type[]): Type =>
    overloads(name, sigs, result, args);

export const STRING_BUILTINS: Record<string, Builtin> = {
  trim: {
    check: sig("trim", [[S], [S, S]], S),
    call: (_c, a) =>
      a.length === 1 ? trimSpace(str(a[0], "trim")) : trimCutset(str(a[0], "trim"), str(a[1], "trim")),
  },
  trimPrefix: {
    check: sig("trimPrefix", [[S], [S, S]], S),
    call: (_c, a) => {
      const s = str(a[0], "trimPrefix");
      const p = a.length > 1 ? str(a[1], "trimPrefix") : " ";
      return s.startsWith(p) ? s.slice(p.length) : s;
    },
  },
  trimSuffix: {
    check: sig("trimSuffix", [[S], [S, S]], S),
    call: (_c, a) => {
      const s = str(a[0], "trimSuffix");
      const p = a.length > 1 ? str(a[1], "trimSuffix") : " ";
      return p !== "" && s.endsWith(p) ? s.slice(0, s.length - p.length) : s;
    },
  },
  upper: { check: sig("upper", [[S]], S), call: (_c, a) => mapCase(str(a[0], "upper"), true) },
  lower: { check: sig("lower", [[S]], S), call: (_c, a) => mapCase(str(a[0], "lower"), false) },
  split: {
    check: sig(
      "split",
      [
        [S, S],
        [S, S, INT],
      ],
      arrayOf(S),
    ),
    call: (c, a) => {
      const r = genSplit(str(a[0], "split"), str(a[1], "split"), 0, a.length > 2 ? int(a[2]) : -1);
      if (r) c.work(r.length);
      return r;
    },
  },
  splitAfter: {
    check: sig(
      "splitAfter",
      [
        [S, S],
        [S, S, INT],
      ],
      arrayOf(S),
    ),
    call: (c, a) => {
      const sep = str(a[1], "splitAfter");
      const r = genSplit(str(a[0], "splitAfter"), sep, sep.length, a.length > 2 ? int(a[2]) : -1);
      if (r) c.work(r.length);
      return r;
    },
  },
  replace: {
    check: sig(
      "replace",
      [
        [S, S, S],
        [S, S, S, INT],
      ],
      S,
    ),
    call: (c, a) =>
      replace(
        c,
        str(a[0], "replace"),
        str(a[1], "replace"),
        str(a[2], "replace"),
        a.length > 3 ? int(a[3]) : -1,
      ),
  },
  repeat: {
    check: sig("repeat", [[S, INT]], S),
    call: (c, a) => {
      const s = str(a[0], "repeat");
      const n = Number(toIndexInt(a[1] ?? null));
      if (n < 0)
        throw new FilterRuntimeError(`invalid argument for repeat (expected positive integer, got ${n})`);
      if (n > 1e6) throw new FilterRuntimeError("memory budget exceeded");
      c.grow(byteLength(s) * n);
      return s.repeat(n);
    },
  },
  join: {
    check: sig("join", [["array"], ["array", S]], S),
    call: (_c, a) => {
      const arr = a[0];
      const glue = a.length > 1 ? str(a[1], "join") : "";
      if (!Array.isArray(arr))
        throw new FilterRuntimeError(`invalid argument for join (type ${goTypeName(arr)})`);
      return arr.map((x) => str(x, "join")).join(glue);
    },
  },
  indexOf: {
    check: sig("indexOf", [[S, S]], INT),
    call: (_c, a) => byteIndexOf(str(a[0], "indexOf"), str(a[1], "indexOf")),
  },
  lastIndexOf: {
    check: sig("lastIndexOf", [[S, S]], INT),
    call: (_c, a) => byteLastIndexOf(str(a[0], "lastIndexOf"), str(a[1], "lastIndexOf")),
  },
  hasPrefix: {
    check: sig("hasPrefix", [[S, S]], BOOL),
    call: (_c, a) => str(a[0], "hasPrefix").startsWith(str(a[1], "hasPrefix")),
  },
  hasSuffix: {
    check: sig("hasSuffix", [[S, S]], BOOL),
    call: (_c, a) => str(a[0], "hasSuffix").endsWith(str(a[1], "hasSuffix")),
  },
};
