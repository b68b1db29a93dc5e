// Property-based fuzzing of the filter compiler: random and adversarial sources (grammar-built
// expressions, mutations of them, token soups, raw text) compiled with the broker's caps
// (`compileMessageFilter`) and without (`compile`), then run against random messages. Nothing ever
// escapes but `FilterCompileError` and `FilterRuntimeError`, and no source compiles or runs longer
// than a deadline.
//
// Used by fuzz-filter.test.ts (bounded) and fuzz-filter.soak.ts (many more runs).
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  compile,
  compileMessageFilter,
  FilterCompileError,
  type FilterMessage,
  FilterRuntimeError,
  MESSAGE_ENV_TYPES,
  MESSAGE_FUNCTIONS,
  messageEnv,
} from "../../src/filter/index.js";

const DEADLINE_MS = 3000;

const IDENTS = [
  "subject",
  "properties",
  "group_id",
  "correlation_id",
  "reply_to",
  "message_id",
  "content_type",
  "enqueued_at",
  "visible_at",
  "subject_parts",
  "body_size",
  "property_keys",
  "body_text",
  "body_json",
  "unknown_name",
  "#",
  "#index",
  "#acc",
  "$env",
  "nil",
];

const FUNCTIONS = [
  "len",
  "upper",
  "lower",
  "trim",
  "split",
  "join",
  "replace",
  "repeat",
  "indexOf",
  "hasPrefix",
  "hasSuffix",
  "first",
  "last",
  "take",
  "keys",
  "values",
  "concat",
  "flatten",
  "uniq",
  "reverse",
  "sort",
  "int",
  "float",
  "string",
  "toJSON",
  "fromJSON",
  "abs",
  "max",
  "min",
  "mean",
  "median",
  "bitshl",
  "now",
  "duration",
  "date",
  "timezone",
  "seconds",
  "days",
  "type",
];

const CLOSURES = [
  "all",
  "any",
  "none",
  "one",
  "filter",
  "map",
  "count",
  "sum",
  "find",
  "groupBy",
  "sortBy",
  "reduce",
];

const BINARY = [
  "+",
  "-",
  "*",
  "/",
  "%",
  "**",
  "==",
  "!=",
  "<",
  "<=",
  ">",
  ">=",
  "&&",
  "||",
  "and",
  "or",
  "in",
  "not in",
  "matches",
  "contains",
  "startsWith",
  "endsWith",
  "??",
  "..",
  "|",
];

const stringLiteral = fc.oneof(
  fc.string({ maxLength: 8 }).map((s) => JSON.stringify(s)),
  fc.constantFrom(
    '"\\ud800"',
    '"\\u0000"',
    '"\u202e"',
    '"😀"',
    "'\\x'",
    "`raw`",
    '"(a+)+$"',
    '"[z-a]"',
    '"(?<n>x)"',
    '"\\\\"',
    '"' + "a".repeat(300) + '"',
    '"1h2m"',
    '"2006-01-02"',
  ),
);

const literal = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom(
    "0",
    "-0",
    "9223372036854775807",
    "9223372036854775808",
    "1e308",
    "1e309",
    "0x7f",
    "0b2",
    "1_000",
    ".5",
    "5.",
  ),
  fc.double({ noNaN: true }).map((d) => String(d)),
  stringLiteral,
  fc.constantFrom("true", "false", "nil", "[]", "{}", "[1, 2, 3]", '{"a": 1}', "1..3"),
);

/** Expressions built from the grammar (deeply nested at times). */
const expression: fc.Arbitrary<string> = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    literal,
    fc.constantFrom(...IDENTS),
    fc.tuple(tie("expr"), fc.constantFrom(...BINARY), tie("expr")).map(([a, op, b]) => `${a} ${op} ${b}`),
    fc.tuple(fc.constantFrom("!", "-", "not ", "+"), tie("expr")).map(([op, a]) => `${op}${a}`),
    tie("expr").map((a) => `(${a})`),
    fc.tuple(tie("expr"), tie("expr"), tie("expr")).map(([a, b, c]) => `${a} ? ${b} : ${c}`),
    fc
      .tuple(tie("expr"), fc.constantFrom("a", "b", "Hour()", "?.x", "[0]", "[-1]", "[1:]", '["k"]'))
      .map(([a, m]) => (m.startsWith("[") || m.startsWith("?") ? `${a}${m}` : `${a}.${m}`)),
    fc
      .tuple(fc.constantFrom(...FUNCTIONS), fc.array(tie("expr"), { maxLength: 3 }))
      .map(([f, args]) => `${f}(${args.join(", ")})`),
    fc
      .tuple(fc.constantFrom(...CLOSURES), tie("expr"), tie("expr"))
      .map(([f, a, body]) => `${f}(${a}, ${body})`),
    fc.array(tie("expr"), { maxLength: 4 }).map((xs) => `[${xs.join(", ")}]`),
    fc.tuple(tie("expr"), tie("expr")).map(([k, v]) => `{${k}: ${v}}`),
    fc.tuple(fc.constantFrom("x", "y"), tie("expr"), tie("expr")).map(([n, v, b]) => `let ${n} = ${v}; ${b}`),
    fc.tuple(tie("expr"), tie("expr")).map(([a, b]) => `${a} | ${b}`),
  ),
})).expr;

/** A grammar-built source broken at one point: cut, a character inserted, two parts swapped. */
const mutated = fc
  .tuple(
    expression,
    fc.nat(),
    fc.constantFrom("(", ")", "[", "]", '"', "'", "`", "\\", ".", "?", "#", "\u0000", "\ud800", ";", "|"),
  )
  .map(([s, n, c]) => {
    const at = n % (s.length + 1);
    switch (n % 3) {
      case 0:
        return s.slice(0, at);
      case 1:
        return s.slice(0, at) + c + s.slice(at);
      default:
        return s.slice(at) + s.slice(0, at);
    }
  });

/** Pathological shapes: deep nesting, long chains, big literals, regex bombs. */
const adversarial = fc.oneof(
  fc
    .tuple(fc.constantFrom("(", "[", "-", "!", "not "), fc.integer({ min: 100, max: 50_000 }))
    .map(([o, n]) => {
      const close = o === "(" ? ")" : o === "[" ? "]" : "";
      return `${o.repeat(n)}1${close.repeat(n)}`;
    }),
  fc.integer({ min: 100, max: 20_000 }).map((n) => `1${" + 1".repeat(n)}`),
  fc.integer({ min: 100, max: 20_000 }).map((n) => `subject${".a".repeat(n)}`),
  fc.integer({ min: 10, max: 5000 }).map((n) => `"${"x".repeat(n * 100)}" != ""`),
  fc.constantFrom(
    "let a = 1..999; all(a, all(a, all(a, true)))",
    'reduce(1..64, #acc + #acc, "ab")',
    'map(1..999999, repeat("ab", #))',
    'subject matches "(a+)+$"',
    'body_text matches "(x+x+)+y"',
    "1..1000000",
    "9".repeat(5000),
    'repeat("x", 1000001)',
    "body_json.a.b.c.d.e",
    'fromJSON(body_text)["x"]',
    'properties["a"] ?? properties["b"] ?? ""',
  ),
);

/** Wrapped so that any well-typed expression is a boolean filter (so more sources compile and run). */
const booleanExpression = fc
  .tuple(
    expression,
    fc.constantFrom('type(%) != ""', "% != nil", 'string(%) startsWith "a"', "len(toJSON(%)) > 2"),
  )
  .map(([e, wrap]) => wrap.replace("%", `(${e})`));

const source = fc.oneof(
  { arbitrary: expression, weight: 3 },
  { arbitrary: booleanExpression, weight: 4 },
  { arbitrary: mutated, weight: 3 },
  { arbitrary: adversarial, weight: 1 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 60 }), weight: 1 },
  {
    arbitrary: fc
      .array(
        fc.oneof(fc.constantFrom(...BINARY, ...IDENTS, ...FUNCTIONS, "(", ")", ",", "[", "]"), literal),
        {
          maxLength: 12,
        },
      )
      .map((xs) => xs.join(" ")),
    weight: 2,
  },
);

const message: fc.Arbitrary<FilterMessage> = fc.record(
  {
    subject: fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom("a.b.c", "", "..", "orders.eu")),
    properties: fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 6 }), { maxKeys: 4 }),
    messageId: fc.string({ maxLength: 6 }),
    contentType: fc.constantFrom("application/json", "text/plain", "", "JSON"),
    body: fc.oneof(
      fc.uint8Array({ maxLength: 40 }),
      fc.jsonValue({ maxDepth: 3 }).map((v) => new TextEncoder().encode(JSON.stringify(v) ?? "")),
    ),
    enqueuedAt: fc.integer({ min: 0, max: 4_102_444_800_000 }),
    visibleAt: fc.integer({ min: 0, max: 4_102_444_800_000 }),
  },
  { requiredKeys: ["enqueuedAt", "visibleAt"] },
);

function timed<T>(what: string, src: string, fn: () => T): T {
  const started = performance.now();
  try {
    return fn();
  } finally {
    const ms = performance.now() - started;
    assert.ok(ms < DEADLINE_MS, `${what} of ${JSON.stringify(src.slice(0, 120))} took ${ms.toFixed(0)} ms`);
  }
}

function onlyFilterErrors(what: string, src: string, fn: () => unknown): "ok" | "compile" | "runtime" {
  try {
    fn();
    return "ok";
  } catch (e) {
    if (e instanceof FilterCompileError) return "compile";
    if (e instanceof FilterRuntimeError) return "runtime";
    assert.fail(`${what} of ${JSON.stringify(src.slice(0, 120))} threw a foreign ${String(e)}`);
  }
}

export interface FilterFuzzStats {
  runs: number;
  compiled: number;
  compileErrors: number;
  runtimeErrors: number;
}

/** Runs the property `runs` times. */
export function fuzzFilters(runs: number, seed?: number): FilterFuzzStats {
  const stats: FilterFuzzStats = { runs, compiled: 0, compileErrors: 0, runtimeErrors: 0 };
  fc.assert(
    fc.property(source, fc.array(message, { minLength: 1, maxLength: 3 }), (src, msgs) => {
      // The broker's message filter: its caps, its environment, errors reported, never thrown.
      let filter: ReturnType<typeof compileMessageFilter> | undefined;
      const outcome = onlyFilterErrors("compileMessageFilter", src, () => {
        filter = timed("compileMessageFilter", src, () => compileMessageFilter(src));
      });
      if (outcome === "compile") stats.compileErrors++;
      if (filter) {
        stats.compiled++;
        for (const m of msgs) {
          let reported: unknown;
          const r = timed("matches", src, () =>
            filter!.matches(m, (e) => {
              reported = e;
            }),
          );
          assert.equal(typeof r, "boolean");
          if (reported !== undefined) {
            assert.ok(reported instanceof FilterRuntimeError);
            stats.runtimeErrors++;
          }
        }
      }
      // The bare compiler without the broker's node cap, and its programs run directly.
      let program: ReturnType<typeof compile> | undefined;
      onlyFilterErrors("compile", src, () => {
        program = timed("compile", src, () =>
          compile(src, { env: MESSAGE_ENV_TYPES, functions: MESSAGE_FUNCTIONS, maxNodes: 0 }),
        );
      });
      if (program) {
        for (const m of msgs) {
          onlyFilterErrors("run", src, () => timed("run", src, () => program!.run(messageEnv(m, "all"))));
        }
      }
    }),
    { numRuns: runs, includeErrorInReport: true, ...(seed !== undefined && { seed }) },
  );
  return stats;
}
