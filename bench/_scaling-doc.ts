// The "How cost grows" section of docs/benchmarks.md: one SVG line chart per scaling group
// (bench/scaling.ts tags each figure with its x), and a table of every point with its ratio to the
// baseline measured beside it. A run of the whole suite writes it into the page; a run filtered to
// scaling.ts replaces only this section (between its markers), leaving the rest of the page as it is.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lineChart } from "./_chart.js";
import { fmt, label, type Measurement, ratio, type Skip } from "./_lib.js";

/** Groups of bench/scaling.ts start with this (kept here so run.ts need not load the module). */
export const SCALING_PREFIX = "Scaling: ";
/** Notes of bench/scaling.ts start with this; they are printed in the section, not with the others. */
export const SCALING_NOTE = "How cost grows: ";
const START = "<!-- scaling:start (written by bench/run.ts from bench/scaling.ts) -->";
const END = "<!-- scaling:end -->";

export const isScaling = (m: Measurement) => m.group.startsWith(SCALING_PREFIX) && m.x !== undefined;

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");

/** Writes the charts into `docsDir`; the section's markdown (markers included). */
export function scalingSection(
  all: Measurement[],
  notes: string[],
  skipped: Skip[],
  docsDir: string,
  when: string,
): string {
  const ms = all.filter(isScaling);
  const groups = [...new Set(ms.map((m) => m.group))];
  const md: string[] = [
    START,
    "## How cost grows",
    "",
    `Measured ${when} by \`bench/scaling.ts\` (\`npm run bench -- scaling\` updates only this section).`,
    "Every point of a chart was measured in the same interleaved rounds as its baseline, so a ratio",
    "holds however busy the shared machine was; both axes are logarithmic.",
    "",
    ...notes.filter((n) => n.startsWith(SCALING_NOTE)).map((n) => `- ${n.slice(SCALING_NOTE.length)}`),
    ...skipped.map((s) => `- Not measured: ${s.system}, ${s.reason} (its point is missing from the chart).`),
    "",
  ];
  for (const group of groups) {
    const title = group.slice(SCALING_PREFIX.length);
    const rows = ms.filter((m) => m.group === group);
    const unit = rows[0]!.unit;
    const systems = [...new Set(rows.map(label))];
    const series = systems.map((system) => ({
      system,
      points: rows.filter((m) => label(m) === system).map((m) => ({ x: m.x!, y: m.value })),
    }));
    const xLabel = title.includes(" against ") ? title.slice(title.indexOf(" against ") + 9) : "x";
    const file = `benchmarks-${slug(title)}.svg`;
    writeFileSync(join(docsDir, file), lineChart(title, xLabel, unit, series));
    const ours = rows.find((m) => m.vs);
    const base = ours?.vs;
    md.push(`### ${title[0]!.toUpperCase()}${title.slice(1)}`, "", `![${title}](${file})`, "");
    md.push(
      `| ${xLabel} | ${systems.join(" | ")} |${base ? ` ratio to ${base} |` : ""}`,
      `|--:|${systems.map(() => "--:|").join("")}${base ? "--:|" : ""}`,
    );
    for (const x of [...new Set(rows.map((m) => m.x!))].sort((a, b) => a - b)) {
      const at = rows.filter((m) => m.x === x);
      const cells = systems.map((s) => {
        const m = at.find((r) => label(r) === s);
        return m ? `${fmt(m.value)} ${m.unit}` : "—";
      });
      const a = at.find((m) => m.vs);
      const b = a && at.find((m) => label(m) === a.vs);
      md.push(
        `| ${x.toLocaleString("en-US")} | ${cells.join(" | ")} |${base ? ` ${a && b ? `${ratio(a, b).toFixed(2)}×` : "—"} |` : ""}`,
      );
    }
    md.push("");
  }
  md.push(END);
  return md.join("\n");
}

/** Replaces the section in an existing page (or inserts it before "## Skipped" / the run times). */
export function mergeScalingSection(page: string, section: string): string {
  const s = page.indexOf(START);
  const e = page.indexOf(END);
  if (s >= 0 && e > s) return page.slice(0, s) + section + page.slice(e + END.length);
  for (const heading of ["\n## Skipped", "\n## Module run times"]) {
    const at = page.indexOf(heading);
    if (at >= 0) return `${page.slice(0, at + 1)}${section}\n\n${page.slice(at + 1)}`;
  }
  return `${page.trimEnd()}\n\n${section}\n`;
}

/** A filtered run: updates only the section of docs/benchmarks.md and its charts. */
export function updateScalingDocs(
  all: Measurement[],
  notes: string[],
  skipped: Skip[],
  docsDir: string,
  when: string,
): boolean {
  if (!all.some(isScaling)) return false;
  const page = join(docsDir, "benchmarks.md");
  const before = existsSync(page) ? readFileSync(page, "utf8") : "# Benchmarks\n";
  writeFileSync(page, mergeScalingSection(before, scalingSection(all, notes, skipped, docsDir, when)));
  return true;
}
