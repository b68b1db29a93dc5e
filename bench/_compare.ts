// Compares two bench result files (bench/results/latest.json of a run before a change and of one
// after it) and flags the figures that got worse by more than a threshold.
//
// Absolute figures move with the machine's load between two runs, so where a figure has a
// baseline measured in the same run (`vs`), its ratio to that baseline is what is compared: a
// busier machine slows both alike. A figure without a baseline is compared as it is.
import { type Measurement, ratio, type SuiteResult } from "./_lib.js";

/** The shape of bench/results/latest.json that a comparison reads. */
export interface BenchFile {
  machine?: { date?: string; commit?: string };
  modules: { script: string; result?: SuiteResult }[];
}

/** One figure found in both files. */
export interface Change {
  /** suite › group › scenario › system, which names the figure in both files. */
  key: string;
  /** "ratio" when the figures are ratios to a same-run baseline, else the figure's unit. */
  basis: string;
  before: number;
  after: number;
  /** Relative change in the better direction: +0.10 is 10% better, -0.10 is 10% worse. */
  gain: number;
  /** Worse by more than the threshold. */
  regressed: boolean;
}

export interface Comparison {
  changes: Change[];
  /** Figures only in the earlier or only in the later file (a scenario added or removed). */
  onlyBefore: string[];
  onlyAfter: string[];
}

const keyOf = (suite: string, m: Measurement) =>
  `${suite} › ${m.group} › ${m.scenario} › ${m.mode === "http" ? `${m.system} (HTTP)` : m.system}`;

/** Each figure of a file by its key, with its ratio to its same-run baseline where it has one. */
function figures(
  file: BenchFile,
): Map<string, { value: number; basis: string; better: Measurement["better"] }> {
  const out = new Map<string, { value: number; basis: string; better: Measurement["better"] }>();
  for (const mod of file.modules) {
    const result = mod.result;
    if (!result) continue;
    for (const m of result.measurements) {
      const base = m.vs
        ? result.measurements.find(
            (b) =>
              b.group === m.group &&
              b.scenario === m.scenario &&
              (b.mode === "http" ? `${b.system} (HTTP)` : b.system) === m.vs,
          )
        : undefined;
      out.set(
        keyOf(result.suite, m),
        base
          ? { value: ratio(m, base), basis: "ratio", better: m.better }
          : { value: m.value, basis: m.unit, better: m.better },
      );
    }
  }
  return out;
}

/** Compares `after` with `before`; `threshold` is the fraction (0.10) past which worse is flagged. */
export function compareBench(before: BenchFile, after: BenchFile, threshold = 0.1): Comparison {
  const a = figures(before);
  const b = figures(after);
  const changes: Change[] = [];
  for (const [key, was] of a) {
    const now = b.get(key);
    if (!now || now.basis !== was.basis || !(was.value > 0) || !(now.value > 0)) continue;
    // For "lower is better" figures (latencies) a rise is the loss.
    const gain = was.better === "higher" ? now.value / was.value - 1 : was.value / now.value - 1;
    changes.push({
      key,
      basis: was.basis,
      before: was.value,
      after: now.value,
      gain,
      regressed: gain < -threshold,
    });
  }
  return {
    changes,
    onlyBefore: [...a.keys()].filter((k) => !b.has(k)),
    onlyAfter: [...b.keys()].filter((k) => !a.has(k)),
  };
}

const num = (v: number) => (v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toPrecision(3));

/** A plain-text report: the regressions first, then every other change. */
export function formatComparison(c: Comparison, threshold = 0.1): string {
  const pct = (g: number) => `${g >= 0 ? "+" : ""}${(g * 100).toFixed(1)}%`;
  const line = (ch: Change) =>
    `${ch.regressed ? "WORSE" : "     "} ${pct(ch.gain).padStart(7)}  ${num(ch.before)} → ${num(ch.after)} ${ch.basis}  ${ch.key}`;
  const worse = c.changes.filter((ch) => ch.regressed);
  const rest = c.changes.filter((ch) => !ch.regressed);
  return [
    `${worse.length} of ${c.changes.length} figures worse by more than ${(threshold * 100).toFixed(0)}%`,
    ...worse.map(line),
    ...rest.map(line),
    ...c.onlyBefore.map((k) => `  only in the earlier file: ${k}`),
    ...c.onlyAfter.map((k) => `  only in the later file: ${k}`),
  ].join("\n");
}
