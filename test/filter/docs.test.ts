// The examples of docs/filters.md run as written.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  compile,
  compileMessageFilter,
  FilterCompileError,
  type FilterMessage,
  type FilterRuntimeError,
} from "../../src/filter/index.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const doc = readFileSync(resolve(repoRoot, "docs/filters.md"), "utf8");

function blocks(lang: string): string[] {
  const out: string[] = [];
  const re = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, "g");
  for (let m = re.exec(doc); m; m = re.exec(doc)) out.push(m[1] as string);
  return out;
}

interface SampleDoc {
  subject: string;
  properties: Record<string, string>;
  contentType: string;
  body: unknown;
  enqueuedAt: string;
  visibleAt: string;
}

const sample = JSON.parse(blocks("json")[0] as string) as SampleDoc;
const message: FilterMessage = {
  subject: sample.subject,
  properties: sample.properties,
  contentType: sample.contentType,
  body: new TextEncoder().encode(JSON.stringify(sample.body)),
  enqueuedAt: Date.parse(sample.enqueuedAt),
  visibleAt: Date.parse(sample.visibleAt),
};

const examples = blocks("filter")
  .flatMap((b) => b.split("\n"))
  .filter((l) => l.trim() !== "")
  .map((l) => {
    const i = l.lastIndexOf("//");
    return { source: l.slice(0, i).trim(), expected: l.slice(i + 2).trim() };
  });

test("the documentation has examples", () => {
  assert.ok(examples.length >= 25);
});

for (const { source, expected } of examples) {
  test(`docs: ${source} → ${expected}`, () => {
    if (expected === "invalid") {
      assert.throws(() => compileMessageFilter(source), FilterCompileError);
      return;
    }
    const filter = compileMessageFilter(source);
    let error: FilterRuntimeError | undefined;
    const result = filter.matches(message, (e) => {
      error = e;
    });
    if (expected === "error") {
      assert.equal(result, false);
      assert.ok(error, "expected a run-time error");
    } else {
      assert.equal(error, undefined, error?.message);
      assert.equal(String(result), expected);
    }
  });
}

test("docs: the TypeScript snippet", () => {
  const filter = compileMessageFilter('subject_parts[0] == "orders" && properties["tier"] == "gold"');
  assert.equal(
    filter.matches({
      subject: "orders.eu.created",
      properties: { tier: "gold" },
      enqueuedAt: Date.now(),
      visibleAt: Date.now(),
    }),
    true,
  );
  const risky = compileMessageFilter("body_json.amount > 100");
  const codes: string[] = [];
  assert.equal(
    risky.matches({ enqueuedAt: 0, visibleAt: 0 }, (err) => codes.push(err.code)),
    false,
  );
  assert.deepEqual(codes, ["filter_runtime"]);
});

test("docs: the nesting limit snippet", () => {
  assert.throws(
    () => compile(`${"(".repeat(600)}1${")".repeat(600)}`),
    (e: unknown) =>
      e instanceof FilterCompileError &&
      e.message === "expression is nested too deeply (the limit is 500 levels) (1:501)",
  );
});
