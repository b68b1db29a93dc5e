import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Measurement, markdownTables, Recorder, ratio } from "../../bench/_lib.js";

/** A contender whose rounds return the given figures in turn. */
const scripted = (system: string, figures: number[], vs?: string) => {
  let i = 0;
  return { system, round: () => figures[i++]!, ...(vs && { vs }) };
};

describe("benchmark ratios", () => {
  it("figures of one comparison are compared round by round: a drifting machine moves both alike", async () => {
    const rec = new Recorder("ratio test");
    // The machine slows after two rounds; in the last round the baseline recovers first.
    const [ours, raw] = await rec.compare(
      { group: "g", scenario: "s", unit: "op/s", better: "higher", rounds: 5 },
      [scripted("ours", [166, 162, 117, 119, 121], "raw"), scripted("raw", [212, 196, 140, 145, 189])],
    );
    assert.ok(ours && raw);
    assert.equal(ours.comparison, raw.comparison);
    // Round ratios 0.78, 0.83, 0.84, 0.82, 0.64: median 0.82; the medians' ratio would be 121/189 = 0.64.
    assert.equal(ratio(ours, raw).toFixed(2), "0.82");
    assert.match(markdownTables(rec.result.measurements), /\| 0\.82× raw \|/);
  });

  it("a warm-up round runs every contender once, interleaved, and is left out of its figures", async () => {
    const rec = new Recorder("ratio test");
    const order: string[] = [];
    const logged = (system: string, figures: number[], vs?: string) => {
      const c = scripted(system, figures, vs);
      return {
        ...c,
        round: () => {
          order.push(system);
          return c.round();
        },
      };
    };
    const [ours, raw] = await rec.compare(
      { group: "g", scenario: "s", unit: "op/s", better: "higher", rounds: 3, warmup: true },
      [logged("ours", [1, 50, 60, 70], "raw"), logged("raw", [2, 100, 100, 100])],
    );
    assert.ok(ours && raw);
    assert.deepEqual(order, ["ours", "raw", "ours", "raw", "ours", "raw", "ours", "raw"]);
    assert.deepEqual(ours.rounds, [50, 60, 70]);
    assert.deepEqual(raw.rounds, [100, 100, 100]);
    assert.equal(ours.value, 60);
    assert.equal("warmup" in ours, false);
  });

  it("figures of different comparisons are compared by their medians", async () => {
    const rec = new Recorder("ratio test");
    const spec = { group: "g", scenario: "s", unit: "op/s", better: "higher" as const, rounds: 3 };
    const [ours] = await rec.compare(spec, [scripted("ours", [10, 30, 20], "raw")]);
    const [raw] = await rec.compare(spec, [scripted("raw", [40, 80, 60])]);
    assert.ok(ours && raw);
    assert.notEqual(ours.comparison, raw.comparison);
    assert.equal(ratio(ours, raw), 20 / 60);
  });

  it("a figure added from elsewhere, without a comparison, is compared by its median", () => {
    const m = (system: string, rounds: number[], value: number): Measurement => ({
      group: "g",
      scenario: "s",
      system,
      unit: "ms",
      better: "lower",
      value,
      rounds,
    });
    assert.equal(ratio(m("a", [1, 3, 2], 2), m("b", [4, 4, 4], 4)), 0.5);
  });
});
