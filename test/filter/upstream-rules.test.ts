// Rules of expr v1.17.8 that its generated corpus exercises and hand-written tests rarely do.
// Each test names one rule; the env is the generator's.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { encodeValue } from "../../scripts/expr-cases/harness.js";
import {
  AnyKeyMap,
  compile,
  FilterCompileError,
  FilterRuntimeError,
  GoFloat,
  type Value,
} from "../../src/filter/index.js";

const ENV: Record<string, Value> = {
  array: [1, 2, 3],
  f64: 0.5,
  foo: { Bar: "foo" },
  i: 1,
  list: [{ Bar: "bar" }, { Bar: "baz" }],
  ok: true,
  str: "str",
};
const types = {
  array: { array: "any" },
  f64: "float",
  foo: { map: "any" },
  i: "int",
  list: { array: "any" },
  ok: "bool",
  str: "string",
} as const;

/** Compiles against the declared env and runs; returns the value in the corpus encoding. */
const run = (source: string): unknown => encodeValue(compile(source, { env: types }).run(ENV));
const compileError = (source: string) =>
  assert.throws(() => compile(source, { env: types }), FilterCompileError);
const runtimeError = (source: string) =>
  assert.throws(() => compile(source, { env: types }).run(ENV), FilterRuntimeError);

describe("$env has no static type (A)", () => {
  test("operators on $env compile and are decided at run time", () => {
    assert.equal(run("$env != $env.ok"), true);
    assert.equal(run("$env == 1.0"), false);
    assert.equal(run("!false || $env"), true);
    runtimeError("$env && ok");
    runtimeError("f64 >= $env");
  });
  test("$env.name of an undeclared name stays a compile error; with ?. it is nil", () => {
    compileError("$env.nope");
    assert.equal(run("$env?.nope"), null);
  });
  test("$env is not callable", () => compileError("$env()"));
});

describe("no type check where the type is unknown (B)", () => {
  test("the index of $env[...] is not checked", () => {
    // `nope` is undeclared and `ok` is no string: neither is a compile error.
    assert.equal(run("$env?.[nope]"), null);
    assert.equal(run("false && $env[ok]"), false);
  });
  test("slice bounds of an unknown value are not checked", () => {
    assert.equal(run("false && $env[nope:ok]"), false);
    assert.deepEqual(run("foo ?? $env[:array]"), { Bar: "foo" });
  });
  test("arguments of a call on an unknown value are not checked", () => {
    assert.equal(run("$env?.nope?.call(undeclared, 1 + 'a')"), null);
    // Evaluated, the unchecked type error is a run-time error.
    runtimeError("foo.Bar(1 + 'a')");
  });
  test("declared names in those places are still checked for the nesting limit and bound", () => {
    assert.equal(run("let x = 'ok'; $env[x]"), true);
  });
});

describe("map literals keep the first of repeated keys (C)", () => {
  test("first wins, all values evaluated", () => {
    assert.equal(run('{"a": 1, "a": 2}.a'), 1);
    assert.deepEqual(run("{foo: f64, foo: array}"), { foo: 0.5 });
    runtimeError("{foo: 1, foo: array[i + 5]}");
  });
});

describe("predicate builtins over strings and maps (D)", () => {
  test("a string is iterated byte by byte", () => {
    assert.deepEqual(run("$env?.[str] | filter(true)"), [115, 116, 114]);
    assert.deepEqual(run("$env?.[str] | map(# + 1)"), [116, 117, 115]);
    // A string whose type is known is still rejected at compile time.
    compileError("str | map(# + 1)");
  });
  test("a map gives one iteration per key, but its element cannot be read", () => {
    assert.equal(run("count($env, true)"), 7);
    assert.deepEqual(run("$env | map(i)"), [1, 1, 1, 1, 1, 1, 1]);
    assert.equal(run("findIndex($env, true)"), 0);
    runtimeError("$env | map(#)");
    runtimeError("filter($env, true)");
  });
});

describe("min and max of one non-numeric argument return it (E)", () => {
  test("alone it is returned, among others it is an error", () => {
    assert.equal(run("max($env?.[str])"), "str");
    compileError("max(str)");
    assert.equal(run("min($env?.nope)"), null);
    assert.equal(run("max($env).f64"), 0.5);
    runtimeError("max($env?.[str], 1)");
    runtimeError('max($env?.list | map("x"))');
  });
});

describe("sort of a non-array gives a nil slice (F)", () => {
  test("nil, yet empty where a slice is expected", () => {
    assert.equal(run("sort($env)"), null);
    assert.equal(run("len(sort($env))"), 0);
    assert.deepEqual(run("sort($env) | map(#)"), []);
    assert.equal(run("sort($env) ?? 1"), 1);
    assert.equal(run("sort(toPairs(foo))"), null);
  });
});

describe("static types of mean, median, min and max (G)", () => {
  test("the first argument's type, or unknown after an array", () => {
    // median(0) is typed int, so it may index an array; its value is still a float.
    assert.deepEqual(run("list?.[median(0)]"), { Bar: "bar" });
    assert.deepEqual(run("mean(i)"), { $float: 1 });
    assert.deepEqual(run("mean(i) + 1"), { $float: 2 });
    assert.equal(compile("max([1], 'x')").resultType, "interface {}");
    compileError("max('x', [1])");
  });
});

describe("folding of && and || with a literal side (H)", () => {
  test("the literal decides whatever the other side is", () => {
    assert.equal(run("$env && false"), false);
    assert.equal(run("[][0] || true"), true);
    // `true && x` is x itself, even when x is not a bool.
    assert.equal(run("true && $env?.[str]"), "str");
    // The checker still runs first: a known non-bool operand is a compile error.
    compileError("true && foo");
  });
});

describe("the rest", () => {
  test("groupBy keys keep their any type", () => {
    const groups = compile("groupBy(list, .Bar)", { env: types }).run(ENV);
    assert.ok(groups instanceof AnyKeyMap && groups.grouped);
    assert.deepEqual(run("groupBy(list, .Bar)"), {
      $map: [
        ["bar", [{ Bar: "bar" }]],
        ["baz", [{ Bar: "baz" }]],
      ],
    });
  });
  test("c ? x : $env is unknown, c ? x : a JSON member takes x's type", () => {
    assert.equal(run("first(ok ?: $env)"), null);
    compileError("first(ok ? 1 : foo.Bar)");
  });
  test("x in [string literals] is a set lookup: a non-string x fails, nil looks up the empty string", () => {
    assert.equal(run('str in ["a", "str"]'), true);
    runtimeError('$env["f" + "64"] in ["a"]');
    assert.equal(run('$env["f" + "64"] in [0.5, "a"]'), true);
    assert.equal(run('$env?.nope in [""]'), true);
  });
  test("sum of an array literal adds its elements with +", () => {
    assert.equal(run("sum([str, str])"), "strstr");
    assert.deepEqual(run("sum([f64, i])"), 1.5);
  });
  test("a count compared with a literal stops once decided", () => {
    // The third element would fail; `> 0` (any) and `>= 2` stop before it.
    assert.equal(run('count([1, 2, "x"], # < 3) > 0'), true);
    assert.equal(run('count([1, 2, "x"], # < 3) >= 2'), true);
    runtimeError('count([1, 2, "x"], # < 3) == 2');
  });
  test("integral floats stay floats through the encoding", () => {
    assert.deepEqual(encodeValue(new GoFloat(2)), { $float: 2 });
  });
});
