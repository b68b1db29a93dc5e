import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { describe, it } from "node:test";
import { type BenchFile, compareBench } from "../../bench/_compare.js";
import type { Measurement } from "../../bench/_lib.js";
import { tempDir } from "../support/temp.js";

const figure = (system: string, value: number, extra: Partial<Measurement> = {}): Measurement => ({
  group: "Enqueue",
  scenario: "1/call",
  system,
  value,
  unit: "jobs/s",
  better: "higher",
  rounds: [value],
  ...extra,
});

const file = (measurements: Measurement[]): BenchFile => ({
  modules: [{ script: "jobs.ts", result: { suite: "Jobs", measurements, skipped: [], notes: [] } }],
});

describe("bench:compare", () => {
  it("compares a figure with a same-run baseline by its ratio: a slower machine is not a regression", () => {
    // Everything ran 30% slower, ours and the baseline alike: the ratio held.
    const before = file([figure("mqlite", 1000, { vs: "raw" }), figure("raw", 800)]);
    const after = file([figure("mqlite", 700, { vs: "raw" }), figure("raw", 560)]);
    const c = compareBench(before, after);
    const ours = c.changes.find((ch) => ch.key.endsWith("› mqlite"));
    assert.ok(ours);
    assert.equal(ours.basis, "ratio");
    assert.equal(ours.regressed, false);
    // The baseline itself has no baseline: compared as measured, it dropped 30%.
    const raw = c.changes.find((ch) => ch.key.endsWith("› raw"));
    assert.equal(raw?.regressed, true);
  });

  it("flags a ratio that fell more than the threshold, and not one that fell less", () => {
    const before = file([figure("mqlite", 1000, { vs: "raw" }), figure("raw", 1000)]);
    const worse = file([figure("mqlite", 850, { vs: "raw" }), figure("raw", 1000)]);
    const slightly = file([figure("mqlite", 950, { vs: "raw" }), figure("raw", 1000)]);
    const mqlite = (f: BenchFile) =>
      compareBench(before, f, 0.1).changes.find((c) => c.key.endsWith("› mqlite"));
    assert.equal(mqlite(worse)?.regressed, true);
    assert.equal(mqlite(worse)?.gain.toFixed(2), "-0.15");
    assert.equal(mqlite(slightly)?.regressed, false);
  });

  it("for a latency a rise is the loss", () => {
    const lat = (v: number) => figure("mqlite", v, { unit: "ms", better: "lower", scenario: "p50" });
    assert.equal(compareBench(file([lat(0.1)]), file([lat(0.2)])).changes[0]?.regressed, true);
    assert.equal(compareBench(file([lat(0.2)]), file([lat(0.1)])).changes[0]?.regressed, false);
  });

  it("lists figures found in only one file", () => {
    const c = compareBench(file([figure("a", 1)]), file([figure("b", 1)]));
    assert.deepEqual(c.changes, []);
    assert.deepEqual(c.onlyBefore, ["Jobs › Enqueue › 1/call › a"]);
    assert.deepEqual(c.onlyAfter, ["Jobs › Enqueue › 1/call › b"]);
  });

  it("the script exits 1 on a regression and 0 without one", () => {
    const tmp = tempDir("mqlite-bench-compare-");
    try {
      const write = (name: string, f: BenchFile) => {
        writeFileSync(tmp.file(name), JSON.stringify(f));
        return tmp.file(name);
      };
      const a = write("a.json", file([figure("mqlite", 1000)]));
      const b = write("b.json", file([figure("mqlite", 500)]));
      const run = (x: string, y: string) =>
        spawnSync(process.execPath, ["--import", "tsx", "scripts/bench-compare.ts", x, y], {
          encoding: "utf8",
        });
      const worse = run(a, b);
      assert.equal(worse.status, 1, worse.stderr);
      assert.match(worse.stdout, /^1 of 1 figures worse by more than 10%/);
      assert.match(worse.stdout, /WORSE +-50\.0% +1,000 → 500 jobs\/s +Jobs › Enqueue › 1\/call › mqlite/);
      const better = run(b, a);
      assert.equal(better.status, 0, better.stderr);
    } finally {
      tmp.cleanup();
    }
  });
});
