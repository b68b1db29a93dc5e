// Shared helpers of the benchmark suite: scratch files, timing, statistics, and the structured
// results every scenario module returns (see run.ts, which aggregates them).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** Rounds per measurement; the median counts. */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Jobs per drain and per bulk enqueue. */
export const JOBS = Number(process.env.BENCH_JOBS ?? 20_000);
/** A 256-byte payload. */
export const PAYLOAD_256 = Buffer.alloc(256, 120);
/** A job argument that serializes to about 256 bytes of JSON (the jobs' payload). */
export const JOB_ARG = "x".repeat(248);

/** A scratch directory for one benchmark, removed on exit. */
export function scratch(prefix: string): {
  dir: string;
  file: (name: string) => string;
  cleanup: () => void;
} {
  const dir = mkdtempSync(join(process.env.BENCH_TMPDIR ?? tmpdir(), `mqlite-bench-${prefix}-`));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  process.once("exit", cleanup);
  return { dir, file: (name) => join(dir, name), cleanup };
}

/** Runs `fn` repeatedly for about `ms` milliseconds; returns operations per second. */
export async function rate(ms: number, fn: () => Promise<number> | number): Promise<number> {
  const start = performance.now();
  let ops = 0;
  while (performance.now() - start < ms) ops += await fn();
  return (ops * 1000) / (performance.now() - start);
}

/** Like `rate`, synchronous (no event-loop turn between operations). */
export function rateSync(ms: number, fn: () => number): number {
  const start = performance.now();
  let ops = 0;
  while (performance.now() - start < ms) ops += fn();
  return (ops * 1000) / (performance.now() - start);
}

/**
 * `workers` concurrent loops of `step` (each returns the operations it did) for `ms` milliseconds
 * after `warmupMs` unmeasured; operations per second.
 */
export async function concurrentRate(
  workers: number,
  ms: number,
  step: () => Promise<number>,
  warmupMs = 0,
): Promise<number> {
  let stop = false;
  let ops = 0;
  const loops = Array.from({ length: workers }, async () => {
    while (!stop) {
      // Not `ops += await step()`: that reads `ops` before the await and loses the others' counts.
      const n = await step();
      ops += n;
    }
  });
  if (warmupMs > 0) await sleep(warmupMs);
  ops = 0;
  const start = performance.now();
  await sleep(ms);
  const counted = ops;
  const elapsed = performance.now() - start;
  stop = true;
  await Promise.all(loops);
  return (counted * 1000) / elapsed;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

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

/** True when something accepts TCP connections at host:port within a second. */
export function tcpAnswers(port: number, host = "127.0.0.1", probe?: { send: string; expect: string }) {
  return new Promise<boolean>((resolve) => {
    const socket = createConnection({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => (probe ? socket.write(probe.send) : done(true)));
    if (probe) socket.once("data", (d) => done(d.toString().startsWith(probe.expect)));
  });
}

export const redisAnswers = () => tcpAnswers(6379, "127.0.0.1", { send: "PING\r\n", expect: "+PONG" });
export const PG_DSN = process.env.MQLITE_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/postgres";

// --- structured results ------------------------------------------------------------------------

/** One measured figure: the median of its rounds. */
export interface Measurement {
  /** The table it belongs to ("Enqueue", "Job drain", ...). */
  group: string;
  /** What was done ("send 1/call", "drain, concurrency 4", ...). */
  scenario: string;
  /** Who did it ("mqlite", "raw better-sqlite3 (normal)", "BullMQ", ...). */
  system: string;
  /** "embedded" or "http" for mqlite; absent for baselines and peers. */
  mode?: "embedded" | "http";
  value: number;
  unit: string;
  /** Which way is better. */
  better: "higher" | "lower";
  /** Every round's figure. */
  rounds: number[];
  /** The system, in the same group and scenario, this figure is compared with (a ratio is shown). */
  vs?: string;
  /**
   * The comparison whose interleaved rounds produced this figure: figures sharing it were measured
   * round by round side by side, so their ratio is taken round by round (see `ratio`).
   */
  comparison?: string;
  note?: string;
  /** Where the figure sits on its chart's x axis (a backlog, a concurrency: see scaling.ts). */
  x?: number;
}

/** A system that was not measured, and why. */
export interface Skip {
  system: string;
  reason: string;
}

export interface SuiteResult {
  suite: string;
  measurements: Measurement[];
  skipped: Skip[];
  notes: string[];
}

type Spec = Omit<Measurement, "value" | "rounds" | "system" | "mode" | "comparison"> & {
  rounds?: number;
  /**
   * One unmeasured round of every contender first (interleaved as the others), for rounds short
   * enough (a fraction of a second) that the first would time the JIT compiling the code under
   * test rather than running it.
   */
  warmup?: boolean;
};

/** One system of a comparison: its name, and a function that runs one round and returns its figure. */
export interface Contender {
  system: string;
  mode?: "embedded" | "http";
  round: () => Promise<number> | number;
  vs?: string;
  note?: string;
  /** Set up once before the rounds (and torn down after). */
  setup?: () => Promise<void> | void;
  teardown?: () => Promise<void> | void;
}

/** Collects a module's measurements, running every comparison in interleaved rounds. */
export class Recorder {
  readonly result: SuiteResult;
  private comparisons = 0;

  constructor(suite: string) {
    this.result = { suite, measurements: [], skipped: [], notes: [] };
  }

  skip(system: string, reason: string): void {
    if (!this.result.skipped.some((s) => s.system === system && s.reason === reason)) {
      this.result.skipped.push({ system, reason });
      console.error(`[${this.result.suite}] ${system} skipped: ${reason}`);
    }
  }

  note(text: string): void {
    this.result.notes.push(text);
  }

  /** Adds a figure measured elsewhere (rounds already taken). */
  add(m: Measurement): void {
    this.result.measurements.push(m);
    log(m);
  }

  /**
   * Runs `rounds` rounds of every contender, interleaved (round 1 of each, then round 2 of each, ...)
   * so that a noisy neighbour hurts everyone alike; records the median of each. A contender that
   * throws is skipped with the error as its reason.
   */
  async compare(spec: Spec, contenders: Contender[]): Promise<Measurement[]> {
    const rounds = spec.rounds ?? ROUNDS;
    const figures = new Map<Contender, number[]>();
    const alive = new Set<Contender>();
    for (const c of contenders) {
      try {
        await c.setup?.();
        alive.add(c);
        figures.set(c, []);
      } catch (err) {
        this.skip(c.system, `${spec.scenario}: ${errText(err)}`);
      }
    }
    const warmups = spec.warmup ? 1 : 0;
    for (let r = -warmups; r < rounds; r++) {
      for (const c of contenders) {
        if (!alive.has(c)) continue;
        try {
          // Each round starts with the heap collected (when run with --expose-gc, as run.ts runs
          // every module): a system does not pay for the garbage the one before it left.
          collectGarbage();
          const figure = await c.round();
          if (r >= 0) figures.get(c)!.push(figure);
        } catch (err) {
          alive.delete(c);
          this.skip(c.system, `${spec.scenario}: ${errText(err)}`);
        }
      }
    }
    const comparison = `${this.result.suite} #${++this.comparisons}`;
    const out: Measurement[] = [];
    for (const c of contenders) {
      try {
        await c.teardown?.();
      } catch {
        // best effort
      }
      if (!alive.has(c)) continue;
      const rs = figures.get(c)!;
      const { rounds: _r, warmup: _w, ...rest } = spec;
      const m: Measurement = {
        ...rest,
        system: c.system,
        ...(c.mode && { mode: c.mode }),
        value: median(rs),
        rounds: rs,
        ...(c.vs && { vs: c.vs }),
        comparison,
        ...(c.note && { note: c.note }),
      };
      this.add(m);
      out.push(m);
    }
    return out;
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message.split("\n")[0]! : String(err);
}

export const fmt = (n: number) =>
  n >= 100 ? Math.round(n).toLocaleString("en-US") : n >= 10 ? n.toFixed(1) : n.toFixed(3);

function log(m: Measurement): void {
  const mode = m.mode ? ` [${m.mode}]` : "";
  console.error(
    `  ${m.group} / ${m.scenario} / ${m.system}${mode}: ${fmt(m.value)} ${m.unit} (rounds ${m.rounds.map(fmt).join(", ")})`,
  );
}

/**
 * `a` against `b`. Two figures measured in the same interleaved rounds are compared round by round
 * (the median of the rounds' ratios): each round of one ran just beside the same round of the other,
 * so a machine whose speed drifts during the run moves both alike, where a ratio of two medians can
 * pair one system's fast round with the other's slow one. Other figures: the ratio of the medians.
 */
export function ratio(a: Measurement, b: Measurement): number {
  const paired =
    a.comparison !== undefined && a.comparison === b.comparison && a.rounds.length === b.rounds.length;
  return paired ? median(a.rounds.map((v, i) => v / b.rounds[i]!)) : a.value / b.value;
}

/** The system name with its mode, as tables show it. */
export const label = (m: Measurement) => (m.mode === "http" ? `${m.system} (HTTP)` : m.system);

/** The markdown tables of a set of results: one per group, a ratio column where a figure has `vs`. */
export function markdownTables(measurements: Measurement[]): string {
  const groups = [...new Set(measurements.map((m) => m.group))];
  const lines: string[] = [];
  for (const g of groups) {
    const rows = measurements.filter((m) => m.group === g);
    lines.push(`### ${g}`, "", "| scenario | system | median | rounds | ratio |", "|---|---|--:|--:|--:|");
    for (const m of rows) {
      const base = m.vs
        ? measurements.find((b) => b.group === g && b.scenario === m.scenario && label(b) === m.vs)
        : undefined;
      const shown = base ? `${ratio(m, base).toFixed(2)}× ${m.vs}` : "";
      lines.push(
        `| ${m.scenario} | ${label(m)}${m.note ? ` (${m.note})` : ""} | ${fmt(m.value)} ${m.unit} | ${m.rounds.map(fmt).join(" / ")} | ${shown} |`,
      );
    }
    lines.push("");
  }
  return lines.join("\n");
}

/**
 * Runs a module's `run` when the module is the entry point: prints its tables, and writes its
 * results as JSON to the file after `--json` (how run.ts collects them).
 */
export async function mainIfEntry(moduleUrl: string, run: () => Promise<SuiteResult>): Promise<void> {
  if (!process.argv[1] || pathToFileURL(process.argv[1]).href !== moduleUrl) return;
  if (process.argv.includes("--serve")) return;
  const result = await run();
  const at = process.argv.indexOf("--json");
  if (at > 0 && process.argv[at + 1]) writeFileSync(process.argv[at + 1]!, JSON.stringify(result, null, 2));
  console.log(`\n## ${result.suite}\n`);
  console.log(markdownTables(result.measurements));
  for (const s of result.skipped) console.log(`- skipped: ${s.system}: ${s.reason}`);
  for (const n of result.notes) console.log(`- ${n}`);
  // Peer clients (Redis, PostgreSQL pools) may hold the loop open.
  process.exit(0);
}

/** A full collection, when the process runs with `--expose-gc` (nothing otherwise). */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
