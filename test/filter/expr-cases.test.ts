// Every line of the upstream conformance sample runs as one test.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { describeFailure, readCases, runCase } from "../../scripts/expr-cases/harness.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
// The sample lives beside the repository (shared conformance data, not ours to copy);
// MQLITE_EXPR_CASES points elsewhere. Missing, it fails loudly: these cases must run.
const casesFile =
  process.env.MQLITE_EXPR_CASES ?? resolve(repoRoot, "../shared/conformance/expr/cases.jsonl");
if (!existsSync(casesFile)) {
  test("expr conformance cases are present", () => {
    assert.fail(
      `expr conformance cases not found at ${casesFile}; set MQLITE_EXPR_CASES to the cases.jsonl file`,
    );
  });
}

for (const { line, case: c } of existsSync(casesFile) ? readCases(casesFile) : []) {
  test(`expr case line ${line}: ${c.expr.slice(0, 80)}`, () => {
    const r = runCase(c, line);
    assert.ok(r.ok, describeFailure(r));
  });
}
