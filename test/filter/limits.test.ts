// compile()'s own caps: a counted nesting limit (the same answer in a cold process and a warm
// one), the source size and the node count; and how the broker reports them.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, test } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { compileFilter } from "../../src/core/filters.js";
import {
  compile,
  compileMessageFilter,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_NODES,
  DEFAULT_MAX_SOURCE_BYTES,
  FilterCompileError,
} from "../../src/filter/index.js";

const parens = (depth: number) => `${"(".repeat(depth - 1)}1${")".repeat(depth - 1)}`;
const sumChain = (depth: number) => `1${" + 1".repeat(depth - 1)}`;
const members = (depth: number) => `a${".b".repeat(depth - 1)}`;
const LIMIT_MESSAGE = new RegExp(`nested too deeply \\(the limit is ${DEFAULT_MAX_DEPTH} levels\\)`);

/** The outcome of compiling `source` with no node cap: "ok" or the compile error's reason. */
function outcome(source: string): string {
  try {
    compile(source, { env: { a: { map: "any" } }, maxNodes: 0 });
    return "ok";
  } catch (e) {
    if (e instanceof FilterCompileError) return e.reason;
    throw e;
  }
}

/** The same outcomes, computed in a fresh process that has compiled nothing before. */
function coldOutcomes(sources: string[]): string[] {
  const script = `
    const { compile, FilterCompileError } = await import(${JSON.stringify(new URL("../../src/filter/index.ts", import.meta.url).href)});
    const out = [];
    for (const source of JSON.parse(process.argv[1])) {
      try { compile(source, { env: { a: { map: "any" } }, maxNodes: 0 }); out.push("ok"); }
      catch (e) { if (!(e instanceof FilterCompileError)) throw e; out.push(e.reason); }
    }
    console.log(JSON.stringify(out));`;
  const flags = process.execArgv
    .filter((a) => !a.startsWith("--test"))
    .map((a) => (a === "tsx" ? import.meta.resolve("tsx") : a));
  const r = spawnSync(
    process.execPath,
    [...flags, "--input-type=module", "-e", script, JSON.stringify(sources)],
    {
      encoding: "utf8",
      timeout: 60_000,
    },
  );
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as string[];
}

describe("nesting limit", () => {
  test("the limit counts parentheses, operands and member chains, and the error names it", () => {
    for (const shape of [parens, sumChain, members]) {
      assert.equal(outcome(shape(DEFAULT_MAX_DEPTH - 1)), "ok", shape.name);
      assert.match(outcome(shape(DEFAULT_MAX_DEPTH + 1)), LIMIT_MESSAGE, shape.name);
      assert.match(outcome(shape(20_000)), LIMIT_MESSAGE, shape.name);
    }
  });

  test("the answer is the same in a cold process and after warm-up", () => {
    const sources = [parens(2000), sumChain(2000), members(2000), parens(DEFAULT_MAX_DEPTH - 1)];
    // Warm this process up: the optimised code uses less stack per level.
    for (let i = 0; i < 2000; i++) compile(sumChain(200));
    const warm = sources.map(outcome);
    assert.deepEqual(coldOutcomes(sources), warm);
    assert.match(warm[0] as string, LIMIT_MESSAGE);
    assert.equal(warm[3], "ok");
  });

  test("maxDepth sets another limit", () => {
    assert.match(
      (() => {
        try {
          compile(parens(60), { maxDepth: 50 });
          return "ok";
        } catch (e) {
          return (e as FilterCompileError).reason;
        }
      })(),
      /the limit is 50 levels/,
    );
    assert.equal(compile(parens(800), { maxDepth: 1000 }).run(), 1);
  });

  test("an unchecked argument still counts", () => {
    // Arguments of a call on an unknown value are not type-checked, but are walked and counted.
    assert.match(outcome(`a.f(${parens(DEFAULT_MAX_DEPTH + 1)})`), LIMIT_MESSAGE);
  });
});

describe("size caps of compile()", () => {
  test("the source is capped at 1 MiB by default", () => {
    assert.equal(DEFAULT_MAX_SOURCE_BYTES, 1024 * 1024);
    // Two quotes around the string: `atCap` is exactly the cap, one more byte is over it.
    const atCap = `"${"x".repeat(DEFAULT_MAX_SOURCE_BYTES - 2)}"`;
    const overCap = `"${"x".repeat(DEFAULT_MAX_SOURCE_BYTES - 1)}"`;
    assert.equal((compile(atCap).run() as string).length, DEFAULT_MAX_SOURCE_BYTES - 2);
    assert.throws(
      () => compile(overCap),
      (e: unknown) => e instanceof FilterCompileError && /maximum length of 1048576 bytes/.test(e.reason),
    );
    assert.equal(
      (compile(overCap, { maxSourceBytes: 0 }).run() as string).length,
      DEFAULT_MAX_SOURCE_BYTES - 1,
    );
  });

  test("the node count is capped at 10000 by default, as upstream's maxNodes", () => {
    assert.equal(DEFAULT_MAX_NODES, 10_000);
    // An array literal of n elements is n + 1 nodes.
    assert.deepEqual(compile(`[${"1,".repeat(9_999)}]`).run()?.constructor, Array);
    assert.throws(() => compile(`[${"1,".repeat(10_000)}]`), /maximum allowed nodes/);
    assert.doesNotThrow(() => compile(`[${"1,".repeat(10_000)}]`, { maxNodes: 0 }));
  });
});

describe("the broker reports a cap as invalid_argument", () => {
  test("a filter nested beyond the limit", () => {
    // Within the filter API's 1000-node cap, but nested deeper than the limit.
    const source = `${"!".repeat(DEFAULT_MAX_DEPTH + 10)}true`;
    assert.throws(() => compileMessageFilter(source), LIMIT_MESSAGE);
    assert.throws(
      () => compileFilter(source, silentLogger, true),
      (e: unknown) => (e as { code?: string }).code === "invalid_argument" && LIMIT_MESSAGE.test(String(e)),
    );
  });
});
