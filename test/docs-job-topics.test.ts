import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { runDocSnippet } from "./support/doc-snippet.js";

// Every ```ts block of docs/job-topics.md that imports "mqlite" is a whole program that must run as
// written: each is run in a fresh directory (through the package's `source` condition).
const doc = readFileSync("docs/job-topics.md", "utf8");
const blocks = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)]
  .map((m) => m[1]!)
  .filter((code) => code.includes('from "mqlite"'));

describe("docs/job-topics.md examples run as written", () => {
  it("has runnable examples", () => assert.ok(blocks.length >= 8));
  blocks.forEach((code, i) => {
    const first = code.split("\n").find((l) => l.startsWith("await queue.") || l.startsWith("queue.")) ?? "";
    it(`example ${i + 1}: ${first.slice(0, 60)}`, () => {
      const r = runDocSnippet(code, `job-topics-${i}`);
      assert.equal(r.status, 0, `example ${i + 1} failed:\n${code}\n${r.stdout}\n${r.stderr}`);
    });
  });
});
