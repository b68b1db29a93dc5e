// Hostile sources: every one is rejected by a cap or finishes quickly, and nothing but the two
// filter errors ever escapes compile() or run().
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  compile,
  compileMessageFilter,
  FilterCompileError,
  type FilterMessage,
  FilterRuntimeError,
} from "../../src/filter/index.js";

const MSG: FilterMessage = { subject: "a.b", enqueuedAt: 0, visibleAt: 0 };

/** Compiles and runs; returns what happened, failing on any foreign exception or slowness. */
function attempt(source: string, opts: Parameters<typeof compile>[1] = {}, limitMs = 2000): string {
  const start = performance.now();
  let outcome: string;
  try {
    const p = compile(source, opts);
    p.run({});
    outcome = "ok";
  } catch (e) {
    if (e instanceof FilterCompileError) outcome = "compile";
    else if (e instanceof FilterRuntimeError) outcome = "runtime";
    else throw new Error(`foreign exception from ${JSON.stringify(source.slice(0, 60))}: ${String(e)}`);
  }
  const ms = performance.now() - start;
  assert.ok(ms < limitMs, `${JSON.stringify(source.slice(0, 60))} took ${ms.toFixed(0)} ms`);
  return outcome;
}

describe("caps", () => {
  test("deep nesting", () => {
    assert.equal(attempt(`${"(".repeat(400)}1${")".repeat(400)}`, { maxNodes: 1000 }), "ok");
    // Deeper than the nesting limit: a compile error, never a crash.
    assert.equal(attempt(`${"(".repeat(20_000)}1${")".repeat(20_000)}`, { maxNodes: 1000 }), "compile");
    // Without a node cap or nesting limit the parser recurses until the stack gives out: still a
    // compile error.
    assert.equal(
      attempt(`${"(".repeat(200_000)}1${")".repeat(200_000)}`, { maxNodes: 0, maxDepth: 0 }),
      "compile",
    );
    assert.equal(attempt(`${"-".repeat(200_000)}1`, { maxNodes: 0 }), "compile");
    assert.equal(attempt(`${"[".repeat(100_000)}${"]".repeat(100_000)}`), "compile");
    assert.equal(attempt(`${"!".repeat(5000)}true`, { maxNodes: 1000 }), "compile");
  });
  test("broker caps reject big sources before parsing", () => {
    for (const source of [
      `subject == "${"x".repeat(4097)}"`,
      `${"(".repeat(3000)}true${")".repeat(3000)}`,
      Array.from({ length: 600 }, () => "true").join("&&"),
    ]) {
      assert.throws(() => compileMessageFilter(source), FilterCompileError);
    }
  });
  test("huge literals", () => {
    assert.equal(attempt("9".repeat(5000)), "compile");
    assert.equal(attempt(`1${"0".repeat(400)}.0`), "compile");
    assert.equal(attempt(`"${"x".repeat(1_000_000)}" != ""`), "ok");
    assert.equal(attempt(`[${"1,".repeat(20000)}]`), "compile");
  });
  test("long chains", () => {
    assert.equal(attempt(`a${".b".repeat(20000)}`, { env: { a: { map: "any" } } }), "compile");
    assert.equal(attempt(`1${" + 1".repeat(20000)}`), "compile");
    assert.equal(attempt(`1${" + 1".repeat(400)}`, { maxNodes: 1000 }), "ok");
    assert.equal(attempt(`1${" + 1".repeat(20000)}`, { maxNodes: 0 }), "compile");
    assert.equal(attempt(`x${" ?? x".repeat(300)}`, { env: { x: "any" } }), "ok");
    assert.equal(attempt(`true${" ? true".repeat(300)}${" : false".repeat(300)}`, { maxNodes: 1000 }), "ok");
  });
});

describe("run-time budgets", () => {
  test("nested loops over a shared array stop at the work budget", () => {
    assert.equal(attempt("let a = 1..999; all(a, all(a, all(a, all(a, true))))"), "runtime");
    // `== 999`, not `> 0`: a count compared with `> 0` stops at the first match.
    assert.equal(attempt("let a = 1..999; count(a, count(a, count(a, # > 0) == 999) == 999)"), "runtime");
    assert.equal(attempt("let a = 1..999; count(a, any(a, none(a, # < 0)))"), "ok");
  });
  test("memory budget", () => {
    assert.equal(attempt("1..1000000"), "runtime");
    assert.equal(attempt("map(1..1000, map(1..1000, #))"), "runtime");
    assert.equal(attempt('repeat("x", 1000001)'), "runtime");
    assert.equal(attempt('map(1..999999, repeat("ab", #))'), "runtime");
  });
  test("exponential strings end with a run-time error", () => {
    assert.equal(attempt('reduce(1..64, #acc + #acc, "ab")'), "runtime");
    assert.equal(attempt('let s = repeat("x", 1000000); replace(s, "", s)'), "runtime");
  });
  test("message filters have a tighter work budget", () => {
    const f = compileMessageFilter("let a = 1..999; all(a, all(a, all(a, true)))");
    let err: unknown;
    const start = performance.now();
    assert.equal(
      f.matches(MSG, (e) => {
        err = e;
      }),
      false,
    );
    assert.ok(err instanceof FilterRuntimeError);
    assert.ok(performance.now() - start < 2000);
  });
});

describe("regular expressions stay linear", () => {
  const evil = [
    "(a+)+$",
    "^(a|aa)+$",
    "(a*)*b",
    "^(a|a?)+$",
    "(x+x+)+y",
    "(.*a){20}",
    "^(([a-z])+.)+[A-Z]([a-z])+$",
    "(\\w+\\s?)+$",
    "a.*a.*a.*a.*a.*b",
  ];
  const input = `${"a".repeat(50_000)}!`;
  for (const pattern of evil) {
    test(pattern, () => {
      const start = performance.now();
      const p = compile(`s matches ${JSON.stringify(pattern)}`, { env: { s: "string" } });
      const r = p.run({ s: input });
      assert.equal(typeof r, "boolean");
      assert.ok(
        performance.now() - start < 2000,
        `${pattern} took ${(performance.now() - start).toFixed(0)} ms`,
      );
    });
  }
  test("huge counted repetitions are rejected", () => {
    assert.equal(attempt('"a" matches "a{1001}"'), "compile");
    assert.equal(attempt('"a" matches "((a{1000}){1000}){1000}"'), "compile");
  });
  test("dynamic patterns: bad ones are run-time errors", () => {
    assert.equal(attempt('"a" matches p', { env: { p: "string" } }), "ok");
    assert.throws(
      () => compile('"a" matches p', { env: { p: "string" } }).run({ p: "(" }),
      FilterRuntimeError,
    );
    assert.equal(attempt('"a" matches "("'), "compile");
    assert.equal(attempt('"a" matches "(?<!x)a"'), "compile");
    assert.equal(attempt('"aa" matches "(a)\\\\1"'), "compile");
  });
});

describe("garbage never escapes as a foreign exception", () => {
  const atoms = [
    "1",
    "1.5",
    '"s"',
    "`r`",
    "b'x'",
    "nil",
    "true",
    "x",
    "#",
    ".x",
    "#index",
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    ",",
    ":",
    "?",
    "?.",
    "??",
    "|",
    "..",
    "+",
    "-",
    "*",
    "/",
    "%",
    "**",
    "==",
    "!=",
    "<",
    "not",
    "in",
    "matches",
    "let",
    "=",
    ";",
    "if",
    "else",
    "map(",
    "filter(",
    "reduce(",
    "len(",
    "date(",
    "duration(",
    "::len(",
    "$env",
    "'\\x'",
    "0x",
    "1e",
    "\u0000",
  ];
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  test("10,000 random token soups", () => {
    for (let i = 0; i < 10_000; i++) {
      const len = 1 + rand(12);
      const parts: string[] = [];
      for (let k = 0; k < len; k++) parts.push(atoms[rand(atoms.length)] as string);
      const source = parts.join(rand(2) ? " " : "");
      attempt(source, { env: { x: "any" } }, 1000);
      attempt(source, {}, 1000);
    }
  });
  test("wrong value types at run time", () => {
    const p = compile("x + 1 > 2 && x.y[0] matches 'a'", { env: { x: "any" } });
    for (const x of [null, "s", [], {}, true, new Uint8Array(2), { y: [1] }, { y: null }]) {
      assert.throws(
        () => p.run({ x }),
        (e: unknown) => e instanceof FilterRuntimeError,
      );
    }
  });
  test("a throwing user function becomes a run-time error", () => {
    const p = compile("boom()", {
      functions: {
        boom: {
          params: [],
          result: "bool",
          call: () => {
            throw new TypeError("kaput");
          },
        },
      },
    });
    assert.throws(() => p.run({}), FilterRuntimeError);
  });
  test("non-string sources", () => {
    assert.throws(() => compile(42 as unknown as string), FilterCompileError);
  });
});
