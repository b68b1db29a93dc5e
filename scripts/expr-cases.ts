/**
 * Runs an expr conformance case file against the filter language.
 * Usage: npm run expr-cases -- <file.jsonl> [more.jsonl ...]
 * Prints each failing case and ends with "N passed, M failed"; exits non-zero on any failure.
 */
import { describeFailure, readCases, runCase } from "./expr-cases/harness.js";

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: npm run expr-cases -- <file.jsonl> [...]");
  process.exit(2);
}
let passed = 0;
let failed = 0;
for (const file of files) {
  for (const { line, case: c } of readCases(file)) {
    const r = runCase(c, line);
    if (r.ok) {
      passed++;
    } else {
      failed++;
      console.log(`${files.length > 1 ? `${file} ` : ""}${describeFailure(r)}`);
    }
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
