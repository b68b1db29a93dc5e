// The upstream conformance data (test/fixtures/expr): the hand-written cases and the sample of
// upstream's generated corpus. Every line runs as one test; each file also has a pass-rate test.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { basename, delimiter, dirname, resolve } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { describeFailure, readCases, runCase } from "../../scripts/expr-cases/harness.js";

const fixtures = resolve(dirname(fileURLToPath(import.meta.url)), "../fixtures/expr");

// MQLITE_EXPR_CASES names other case files (separated like PATH entries) to run instead.
const files = process.env.MQLITE_EXPR_CASES
  ? process.env.MQLITE_EXPR_CASES.split(delimiter).filter((f) => f !== "")
  : [resolve(fixtures, "cases.jsonl"), resolve(fixtures, "generated-sample.jsonl")];

/** Required pass rate per file name: the hand-written cases all pass; the generated sample ≥ 99.5%. */
const REQUIRED_RATE: Record<string, number> = { "cases.jsonl": 1, "generated-sample.jsonl": 0.995 };

/**
 * Lines known to fail, per file name, each with the reason. Such a line must keep failing (so the
 * list cannot go stale); everything else must pass. Empty: every shipped case passes.
 */
const KNOWN_EXCEPTIONS: Record<string, ReadonlyMap<number, string>> = {};

for (const file of files) {
  const name = basename(file);
  describe(`expr conformance: ${name}`, () => {
    if (!existsSync(file)) {
      test("the case file is present", () => {
        assert.fail(`expr conformance cases not found at ${file}`);
      });
      return;
    }
    const cases = readCases(file);
    const exceptions = KNOWN_EXCEPTIONS[name] ?? new Map<number, string>();
    let passed = 0;
    for (const { line, case: c } of cases) {
      const r = runCase(c, line);
      if (r.ok) passed++;
      test(`line ${line}: ${c.expr.slice(0, 80)}`, () => {
        if (exceptions.has(line)) {
          assert.ok(!r.ok, `line ${line} passes now: remove it from KNOWN_EXCEPTIONS`);
        } else {
          assert.ok(r.ok, describeFailure(r));
        }
      });
    }
    test(`pass rate is at least ${(REQUIRED_RATE[name] ?? 1) * 100}%`, () => {
      assert.ok(cases.length > 0, "the case file is empty");
      const rate = passed / cases.length;
      assert.ok(
        rate >= (REQUIRED_RATE[name] ?? 1),
        `${passed} of ${cases.length} passed (${(rate * 100).toFixed(2)}%)`,
      );
    });
  });
}
