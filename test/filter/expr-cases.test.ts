// Every line of the upstream conformance sample runs as one test.
import assert from "node:assert/strict";
import { dirname, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { describeFailure, readCases, runCase } from "../../scripts/expr-cases/harness.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const casesFile = resolve(repoRoot, "../shared/conformance/expr/cases.jsonl");

for (const { line, case: c } of readCases(casesFile)) {
  test(`expr case line ${line}: ${c.expr.slice(0, 80)}`, () => {
    const r = runCase(c, line);
    assert.ok(r.ok, describeFailure(r));
  });
}
