import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runDocSnippet, sectionBlocks } from "./support/doc-snippet.js";

// The ```ts blocks of the metrics, maxPending and debouncing sections of docs/jobs.md are whole
// programs that must run as written (each in a fresh directory, through the package's `source`
// condition), and print what their comments say.
const SECTIONS = ["## Metrics", "## Queue limits: maxPending", "## Debouncing"];
const blocks = sectionBlocks("docs/jobs.md", SECTIONS);

/** What each block must print (in order of the blocks above). */
const EXPECTED: RegExp[][] = [
  [/^JobFailedError$/m, /^completed 3$/m, /\[ \{ minute: \d+, count: 3 \} \]/, /^failed 1$/m],
  [/^queue 'mail' is full: 2 pending >= maxPending 2$/m, /^sent to c@example\.com$/m],
  [/^true false$/m, /^report of u1 after name$/m, /^report of u2 after name$/m],
];

describe("docs/jobs.md metrics, maxPending and debouncing examples run as written", () => {
  it("has the examples", () => assert.equal(blocks.length, EXPECTED.length));
  blocks.forEach(({ heading, code }, i) => {
    it(`${heading} example ${i + 1}`, () => {
      const r = runDocSnippet(code, `jobs-metrics-example-${i}`);
      assert.equal(r.status, 0, `example ${i + 1} failed:\n${code}\n${r.stdout}\n${r.stderr}`);
      for (const re of EXPECTED[i] ?? []) assert.match(r.stdout, re, `example ${i + 1} prints ${re}`);
    });
  });
});
