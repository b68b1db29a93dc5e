// The public compile() API, its options and a sample of language semantics beyond the upstream cases.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  compile,
  Duration,
  FilterCompileError,
  FilterRuntimeError,
  GoFloat,
  GoTime,
  inferEnvTypes,
  stringMap,
  type Value,
} from "../../src/filter/index.js";

const run = (
  source: string,
  env: Record<string, Value> | null = null,
  opts: Parameters<typeof compile>[1] = {},
) => compile(source, opts).run(env);

describe("errors", () => {
  test("compile errors carry a position and a stable code", () => {
    const e = (() => {
      try {
        compile("1 +\n  2 + nope", { env: {} });
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    assert.ok(e instanceof FilterCompileError);
    assert.ok(e instanceof Error);
    assert.equal(e.code, "invalid_filter");
    assert.equal(e.line, 2);
    assert.equal(e.column, 7);
    assert.equal(e.offset, 10);
    assert.match(e.message, /unknown name nope/);
  });
  test("run-time errors have their own class and code", () => {
    assert.throws(
      () => run("[1][2]"),
      (e: unknown) =>
        e instanceof FilterRuntimeError &&
        e.code === "filter_runtime" &&
        /index out of range/.test(e.message),
    );
  });
});

describe("environment", () => {
  test("declared types drive the checker", () => {
    const env = { n: "int", s: "string", tags: { array: "string" }, m: { map: "any" } } as const;
    assert.equal(compile("n + 1", { env }).resultType, "int");
    assert.equal(compile("tags[0]", { env }).resultType, "string");
    assert.equal(compile("m.x", { env }).resultType, "interface {}");
    assert.throws(() => compile('n + "x"', { env }), FilterCompileError);
    assert.throws(() => compile("s[0]", { env }), FilterCompileError);
    assert.equal(compile("m.x + 1", { env }).resultType, "interface {}");
  });
  test("no env declared: any name, nil env at run time fails on fetch", () => {
    assert.equal(run("a == 1", { a: 1 }), true);
    assert.throws(() => run("a"), FilterRuntimeError);
  });
  test("allowUndefinedVariables: unknown names are nil", () => {
    assert.equal(run("x == nil", {}, { env: {}, allowUndefinedVariables: true }), true);
  });
  test("inferEnvTypes from a sample", () => {
    assert.deepEqual(
      inferEnvTypes({
        i: 1,
        f: 1.5,
        g: new GoFloat(2),
        s: "",
        b: true,
        a: [],
        m: {},
        n: null,
        t: GoTime.fromEpochMs(0),
      }),
      {
        i: "int",
        f: "float",
        g: "float",
        s: "string",
        b: "bool",
        a: { array: "any" },
        m: { map: "any" },
        n: "nil",
        t: "time",
      },
    );
  });
  test("typed string maps read missing keys as empty strings, even dynamically", () => {
    const env = { p: stringMap({ a: "1" }) };
    assert.equal(run('p.b == "" && get(p, "b") == ""', env, { env: { p: { map: "string" } } }), true);
  });
  test("functions, shadowing builtins, and :: to reach the builtin", () => {
    const functions = {
      double: { params: ["int" as const], result: "int" as const, call: (x: Value) => (x as number) * 2 },
      len: { params: ["string" as const], result: "int" as const, call: () => -1 },
    };
    assert.equal(run("double(21)", null, { functions }), 42);
    assert.equal(run('len("abc")', null, { functions }), -1);
    assert.equal(run('::len("abc")', null, { functions }), 3);
    assert.throws(() => compile('double("x")', { functions }), FilterCompileError);
  });
});

describe("options", () => {
  test("expect", () => {
    assert.throws(() => compile("1", { expect: "bool" }), FilterCompileError);
    assert.equal(run("x", { x: null }, { expect: "bool" }), false);
    assert.throws(() => run("x", { x: 1 }, { expect: "bool" }), FilterRuntimeError);
    assert.equal(run("x", { x: 1.7 }, { expect: "int" }), 1);
    assert.deepEqual(run("1", null, { expect: "float64" }), new GoFloat(1));
    assert.throws(
      () => compile("x", { env: { x: "any" }, expect: "bool", warnOnAny: true }),
      FilterCompileError,
    );
  });
  test("maxNodes and maxSourceBytes", () => {
    assert.throws(() => compile("1 + 1", { maxNodes: 2 }), /maximum allowed nodes/);
    assert.equal(run("1 + 1", null, { maxNodes: 3 }), 2);
    assert.throws(() => compile("'é'", { maxSourceBytes: 3 }), FilterCompileError);
    assert.equal(run("'é'", null, { maxSourceBytes: 4 }), "é");
  });
  test("disableIfOperator makes if an identifier", () => {
    assert.equal(run("if", { if: 3 }, { disableIfOperator: true }), 3);
    assert.equal(run("if true { 1 } else { 2 }"), 1);
  });
  test("shortCircuit: false evaluates both operands", () => {
    // A variable, not a literal: `false && x` is folded away at compile time.
    assert.equal(run("f && [][0] == 1", { f: false }), false);
    assert.throws(() => run("f && [][0] == 1", { f: false }, { shortCircuit: false }), FilterRuntimeError);
  });
  test("disabledBuiltins", () => {
    assert.throws(() => compile("upper('a')", { env: {}, disabledBuiltins: ["upper"] }), FilterCompileError);
  });
  test("timezone applies to date() and now()", () => {
    const t = run('date("2024-01-15 12:00:00")', null, { timezone: "Asia/Tokyo" }) as GoTime;
    assert.equal(t.sec, Date.UTC(2024, 0, 15, 3, 0, 0) / 1000);
    assert.equal(run("now().Location().String()", null, { timezone: "Europe/Paris" }), "Europe/Paris");
    assert.throws(() => compile("1", { timezone: "Nowhere/Land" }), FilterCompileError);
  });
  test("memory budget", () => {
    assert.equal(run("len(1..999999)"), 999999);
    assert.throws(() => run("len(1..999999)", null, { memoryBudget: 1000 }), /memory budget exceeded/);
  });
});

describe("64-bit integers", () => {
  test("wrap around like int64", () => {
    assert.equal(run("9223372036854775807 + 1"), -9223372036854775808n);
    assert.equal(run("-9223372036854775807 - 1 - 1"), 9223372036854775807n);
    assert.equal(run("4611686018427387904 * 2"), -9223372036854775808n);
    assert.equal(run("9007199254740993 - 1"), 9007199254740992n);
    assert.equal(run("9007199254740993 % 10"), 3);
    assert.equal(run("9007199254740992 + 1 == 9007199254740993"), true);
    assert.equal(run("abs(-9223372036854775807 - 1)"), -9223372036854775808n);
  });
  test("big ints mix with floats and strings", () => {
    assert.equal(run("string(9223372036854775807)"), "9223372036854775807");
    assert.equal(run('int("-9223372036854775808")'), -9223372036854775808n);
    assert.throws(() => run('int("9223372036854775808")'), FilterRuntimeError);
    assert.equal(run("9223372036854775807 > 9.2e18"), true);
    assert.throws(() => compile("9223372036854775808"), FilterCompileError);
  });
  test("small ints stay JS numbers", () => {
    assert.equal(typeof run("1 + 2"), "number");
    assert.equal(run("-0 * 5"), 0);
    assert.ok(!Object.is(run("0 * -5"), -0));
  });
});

describe("time", () => {
  test("Go layouts: parsing and formatting", () => {
    assert.equal(
      run('date("14/08/2023", "02/01/2006").Format("Monday, January 2 2006")'),
      "Monday, August 14 2023",
    );
    assert.equal(run('date("3:04PM", "3:04PM").Format("15:04")'), "15:04");
    assert.equal(
      run('date("2023-08-14T10:00:00.5+05:30").Format(".000 -07:00 Z07:00")'),
      ".500 +05:30 +05:30",
    );
    assert.equal(run('date("2023-08-14").Format("Jan _2 06 002 __2")'), "Aug 14 23 226 226");
    assert.throws(() => run('date("2023-02-30")'), FilterRuntimeError);
    assert.throws(() => run('date("not a date")'), /invalid date/);
  });
  test("durations", () => {
    assert.deepEqual(run('duration("1h15m30.918273645s")'), new Duration(4530918273645));
    assert.equal(run('duration("-1.5h").String()'), "-1h30m0s");
    assert.equal(run('duration("1µs").String()'), "1µs");
    assert.equal(run('duration("1500us").String()'), "1.5ms");
    assert.throws(() => run('duration("1d")'), /unknown unit/);
    assert.throws(() => compile('duration("1h") > 0'), FilterCompileError);
    assert.throws(() => compile('duration("1h") / duration("1m")'), FilterCompileError);
  });
  test("zones", () => {
    assert.equal(
      run('date("2023-07-01 12:00", "2006-01-02 15:04", "Europe/Berlin").Format("15:04 MST -0700")'),
      "12:00 CEST +0200",
    );
    assert.equal(run('date("2023-07-01T12:00:00Z").In(timezone("America/New_York")).Hour()'), 8);
    assert.throws(() => run('timezone("Mars/Olympus")'), FilterRuntimeError);
  });
});

describe("regular expressions (RE2)", () => {
  const cases: [string, string, boolean][] = [
    ["abc", "b", true],
    ["abc", "^b", false],
    ["ABC", "(?i)abc", true],
    ["ABC", "(?i:a)BC", true],
    ["aBC", "(?i:a)bc", false],
    ["a\nb", "a.b", false],
    ["a\nb", "(?s)a.b", true],
    ["x1", "\\d", true],
    ["é", "\\w", false],
    ["é", "\\pL", true],
    ["Ω", "\\p{Greek}", true],
    ["tab\t", "[[:space:]]", true],
    ["abc", "a[^x]c", true],
    ["a+", "a\\+", true],
    ["a.b", "\\Qa.b\\E", true],
    ["axb", "\\Qa.b\\E", false],
    ["word end", "end\\z", true],
    ["foo", "\\Afoo$", true],
    ["😀", "^.$", true],
    ["aaa", "^a{2,3}$", true],
    ["aaaa", "^a{2,3}$", false],
    ["", "^$", true],
    ["x", "", true],
  ];
  for (const [s, re, want] of cases) {
    test(`${JSON.stringify(s)} matches ${JSON.stringify(re)}`, () => {
      assert.equal(run(`s matches ${JSON.stringify(re)}`, { s }), want);
    });
  }
  test("RE2 rejects Perl-only syntax at compile time", () => {
    for (const re of ["(?=a)", "(?<!a)b", "a**", "(", "[a", "x{2,1}", "\\1"]) {
      assert.throws(() => compile(`"a" matches ${JSON.stringify(re)}`), FilterCompileError, re);
    }
  });
});
