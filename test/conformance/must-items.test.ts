import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

// Every MUST item of the specification's §3 (copied into must-items.json) has a conformance test
// whose name starts with its number, so that none can go missing when cases are renamed or moved.
const here = dirname(fileURLToPath(import.meta.url));
const casesDir = join(here, "cases");
const { items } = JSON.parse(readFileSync(join(here, "must-items.json"), "utf8")) as { items: string[] };

/** The numbers that start a test's name (`it("15.1 …"` or a template) in every case file. */
function numberedTests(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of readdirSync(casesDir).filter((f) => f.endsWith(".case.ts"))) {
    const text = readFileSync(join(casesDir, file), "utf8");
    for (const m of text.matchAll(/\bit\(\s*["'`](\d+\.\d+) \S/g)) {
      const list = found.get(m[1]!) ?? [];
      list.push(file);
      found.set(m[1]!, list);
    }
  }
  return found;
}

describe("the conformance suite covers the specification's MUST items", () => {
  it("the fixture lists the 43 items of §3 sections 1-8, 10, 14 and 15, each once", () => {
    assert.equal(items.length, 43);
    assert.equal(new Set(items).size, items.length);
    for (const item of items) assert.match(item, /^(?:[1-8]|10|14|15)\.\d+$/);
  });

  it("every item has at least one test named by its number", () => {
    const found = numberedTests();
    const missing = items.filter((item) => !found.has(item));
    assert.deepEqual(missing, [], `no conformance test is named for: ${missing.join(", ")}`);
  });
});
