import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runDocSnippet, sectionBlocks } from "./support/doc-snippet.js";

// The ```ts blocks of the flows, job logs, cross-process events and stall recovery sections of docs/jobs.md are
// whole programs that must run as written (each in a fresh directory, through the package's
// `source` condition), and print what their comments say.
const SECTIONS = ["## Flows", "## Job logs and progress", "## Events across processes", "## Stall recovery"];
const blocks = sectionBlocks("docs/jobs.md", SECTIONS);

/** What each block must print (in order of the blocks above). */
const EXPECTED: RegExp[][] = [
  [/^9$/m, /children: \[/],
  [
    /copied: \{ '2': 'copied https:\/\/eu\.example' \}/,
    /'3': '.*down\.example is unreachable/,
    /^cancelled$/m,
  ],
  [/row 4 imported/, /count: 4/, /\[ 'row 3 imported' \]/, /^100$/m, /started \d+ attempt 1/, /\d+ 100%/],
  [/enqueued \d+ resize/, /completed \d+ [\d.]+ event \d+/],
  [/^2000$/m, /^attempt 1$/m, /^300000$/m],
];

describe("docs/jobs.md flows, job logs, events and stall recovery examples run as written", () => {
  it("has the examples", () => assert.equal(blocks.length, EXPECTED.length));
  blocks.forEach(({ heading, code }, i) => {
    it(`${heading} example ${i + 1}`, () => {
      const r = runDocSnippet(code, `jobs-example-${i}`);
      assert.equal(r.status, 0, `example ${i + 1} failed:\n${code}\n${r.stdout}\n${r.stderr}`);
      for (const re of EXPECTED[i] ?? []) assert.match(r.stdout, re, `example ${i + 1} prints ${re}`);
    });
  });
});
