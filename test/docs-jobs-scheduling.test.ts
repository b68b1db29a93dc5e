import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runDocSnippet, sectionBlocks } from "./support/doc-snippet.js";

// The ```ts blocks of the backoff, interval periodic, retention and promote/remove/retry sections
// of docs/jobs.md are whole programs that must run as written (each in a fresh directory, through
// the package's `source` condition), and print what their comments say.
const SECTIONS = [
  "## Fixed and custom backoff",
  "## Keeping completed and dead jobs",
  "## Promote, remove and retry a job",
  "## Periodic jobs every N ms",
];
const blocks = sectionBlocks("docs/jobs.md", SECTIONS);

/** What each block must print, in order (the blocks above, in order). */
const EXPECTED: string[][] = [
  ["ok", "2", "true", "true"],
  ["5", "true", "1"],
  ["sent to ops", "true", "synced", "null", "true job_state complete"],
  ["0", "200", "true"],
];

describe("docs/jobs.md backoff, interval periodic, retention and job actions examples run as written", () => {
  it("has the examples", () => assert.equal(blocks.length, EXPECTED.length));
  blocks.forEach(({ heading, code }, i) => {
    it(`${heading} example`, () => {
      const r = runDocSnippet(code, `jobs-sched-example-${i}`);
      assert.equal(r.status, 0, `${heading} failed:\n${code}\n${r.stdout}\n${r.stderr}`);
      assert.deepEqual(r.stdout.trim().split("\n"), EXPECTED[i], `${heading} prints what it says`);
    });
  });
});
