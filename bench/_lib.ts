import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A scratch directory for one benchmark, removed on exit. */
export function scratch(prefix: string): { file: (name: string) => string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `mqlite-bench-${prefix}-`));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  process.once("exit", cleanup);
  return { file: (name) => join(dir, name), cleanup };
}

/** Runs `fn` repeatedly for about `ms` milliseconds; returns operations per second. */
export async function rate(ms: number, fn: () => Promise<number> | number): Promise<number> {
  const start = performance.now();
  let ops = 0;
  while (performance.now() - start < ms) ops += await fn();
  return (ops * 1000) / (performance.now() - start);
}

/** Times one run of `fn` that performs `ops` operations; returns operations per second. */
export async function timed(ops: number, fn: () => Promise<void> | void): Promise<number> {
  const start = performance.now();
  await fn();
  return (ops * 1000) / (performance.now() - start);
}

/** The median of a list of numbers. */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Percentile (0..100) of a list of numbers. */
export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export interface Row {
  scenario: string;
  ours: number;
  baseline: number;
  unit?: string;
  note?: string;
}

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(n >= 10 ? 1 : 3));

/** Prints rows as a markdown table with the ratio ours/baseline. */
export function printTable(title: string, baselineName: string, rows: Row[]): void {
  console.log(`\n### ${title}\n`);
  console.log(`| scenario | mqlite | ${baselineName} | ratio |`);
  console.log("|---|--:|--:|--:|");
  for (const r of rows) {
    const unit = r.unit ? ` ${r.unit}` : "";
    console.log(
      `| ${r.scenario}${r.note ? ` (${r.note})` : ""} | ${fmt(r.ours)}${unit} | ${fmt(r.baseline)}${unit} | ${(r.ours / r.baseline).toFixed(2)}× |`,
    );
  }
}

/** A 256-byte payload. */
export const PAYLOAD_256 = Buffer.alloc(256, 120);
