// Runs the whole benchmark suite: every scenario module under bench/ in its own child process,
// compiled first by tsc as the package is (each also runs alone, through tsx: `npx tsx
// bench/engine.ts`, a little slower: see compileSuite), collects their structured results, and writes
// bench/results/latest.json, docs/benchmarks.md (tables, targets) and docs/benchmarks.svg (chart),
// with the machine's details and its load at the start. The dated "(partial runs)" section written
// by hand below the tables is carried over from the file it replaces.
// Usage: npm run bench [-- name-substring ...]   (a filter writes only JSON, except that a run of
// scaling.ts also replaces the "How cost grows" section of docs/benchmarks.md and its charts)
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, freemem, loadavg, release, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { barChart } from "./_chart.js";
import {
  fmt,
  JOBS,
  label,
  type Measurement,
  markdownTables,
  ROUNDS,
  ratio,
  type SuiteResult,
} from "./_lib.js";
import { isScaling, SCALING_NOTE, scalingSection, updateScalingDocs } from "./_scaling-doc.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
/** Where the suite is compiled to (see `compileSuite`). */
const compiled = join(root, "node_modules", ".cache", "mqlite-bench");
/** Modules in the order they run; others found under bench/ run after them. */
const ORDER = ["engine.ts", "jobs.ts", "postgres.ts", "http.ts", "backlog.ts", "stats.ts", "filter.ts"];
const filters = process.argv.slice(2);
const found = readdirSync(here).filter((f) => f.endsWith(".ts") && f !== "run.ts" && !f.startsWith("_"));
const scripts = [
  ...ORDER.filter((f) => found.includes(f)),
  ...found.filter((f) => !ORDER.includes(f)).sort(),
].filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)));

function version(pkg: string): string {
  try {
    return (
      JSON.parse(readFileSync(join(root, "node_modules", pkg, "package.json"), "utf8")) as { version: string }
    ).version;
  } catch {
    return "not installed";
  }
}

function machine() {
  const db = new Database(":memory:");
  const sqlite = (db.prepare("SELECT sqlite_version() AS v").get() as { v: string }).v;
  db.close();
  const git = spawnSync("git", ["rev-parse", "--short", "HEAD"], {
    cwd: root,
    encoding: "utf8",
  }).stdout.trim();
  // Figures of code that differs from the commit say so.
  const dirty = spawnSync("git", ["status", "--porcelain", "--", "src", "bench/*.ts", "package.json"], {
    cwd: root,
    encoding: "utf8",
  }).stdout.trim();
  return {
    date: new Date().toISOString(),
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    ramGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    freeGiB: Math.round((freemem() / 2 ** 30) * 10) / 10,
    os: `${process.platform} ${release()}`,
    node: process.version,
    sqlite,
    betterSqlite3: version("better-sqlite3"),
    loadAverageAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
    commit: dirty ? `${git} with uncommitted changes` : git,
    rounds: ROUNDS,
    jobs: JOBS,
    peers: {
      plainjob: version("plainjob"),
      liteque: version("liteque"),
      bullmq: version("bullmq"),
      "bee-queue": version("bee-queue"),
      "pg-boss": version("pg-boss"),
      "graphile-worker": version("graphile-worker"),
    },
  };
}

/**
 * Compiles the suite and the sources it imports with tsc, as the package is built: the modules run
 * that JavaScript, as users run the package, rather than through tsx, whose transform wraps every
 * function made at run time in a naming helper (esbuild's `keepNames`) that the built package does
 * not have. Incremental: a second run recompiles what changed. The package's manifest is copied
 * beside the compiled `src/` (it reads its version from `../package.json`).
 */
function compileSuite(): void {
  const t = performance.now();
  const r = spawnSync(
    process.execPath,
    [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.bench.json")],
    { cwd: root, stdio: "inherit" },
  );
  if (r.status !== 0) throw new Error(`compiling the suite failed (tsc exited with ${r.status ?? r.signal})`);
  copyFileSync(join(root, "package.json"), join(compiled, "package.json"));
  console.log(`compiled the suite in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

interface ModuleRun {
  script: string;
  seconds: number;
  status: number | null;
  result?: SuiteResult;
  /** The module's stdout, for a module that returns no structured results. */
  text?: string;
}

const info = machine();
console.log(
  `machine: ${info.cpu}, ${info.cores} cores, ${info.ramGiB} GiB, load ${info.loadAverageAtStart.join(" ")}`,
);
compileSuite();
const runs: ModuleRun[] = [];
const outDir = join(tmpdir(), `mqlite-bench-results-${process.pid}`);
mkdirSync(outDir, { recursive: true });
for (const script of scripts) {
  console.log(`\n=== ${script} ===`);
  const json = join(outDir, `${script}.json`);
  const t = performance.now();
  // --expose-gc: a comparison collects the heap before each round (see Recorder.compare).
  const r = spawnSync(
    process.execPath,
    ["--expose-gc", join(compiled, "bench", script.replace(/\.ts$/, ".js")), "--json", json],
    {
      stdio: ["ignore", "pipe", "inherit"],
      encoding: "utf8",
      maxBuffer: 64 * 2 ** 20,
    },
  );
  process.stdout.write(r.stdout ?? "");
  const run: ModuleRun = {
    script,
    seconds: Math.round((performance.now() - t) / 100) / 10,
    status: r.status,
  };
  try {
    run.result = JSON.parse(readFileSync(json, "utf8")) as SuiteResult;
  } catch {
    run.text = r.stdout;
  }
  runs.push(run);
}
rmSync(outDir, { recursive: true, force: true });

const all: Measurement[] = runs.flatMap((r) => r.result?.measurements ?? []);
const find = (group: string | RegExp, scenario: string | RegExp, system: string) =>
  all.find(
    (m) =>
      (typeof group === "string" ? m.group === group : group.test(m.group)) &&
      (typeof scenario === "string" ? m.scenario === scenario : scenario.test(m.scenario)) &&
      label(m) === system,
  );

interface Target {
  target: string;
  measured: string;
  met: boolean | undefined;
}

function ratioTarget(
  target: string,
  a: Measurement | undefined,
  b: Measurement | undefined,
  min: number,
): Target {
  if (!a || !b) return { target, measured: "not measured", met: undefined };
  const r = ratio(a, b);
  return {
    target,
    measured: `${fmt(a.value)} / ${fmt(b.value)} ${a.unit}: ${r.toFixed(2)}×`,
    met: r >= min,
  };
}

function targets(): Target[] {
  const JG = /^Job queue/;
  const BG = /^Broker, embedded/;
  const drainC4 = /^drain [\d,]+, concurrency 4$/;
  const out: Target[] = [
    ratioTarget(
      "Enqueue 1/call ≥ 0.75× raw single-insert transactions (job face)",
      find(JG, "enqueue 1/call", "mqlite"),
      find(JG, "enqueue 1/call", "raw better-sqlite3 (normal)"),
      0.75,
    ),
    ratioTarget(
      "Send 1/call ≥ 0.75× raw single-insert transactions (broker face)",
      find(BG, "send 1/call, 1 caller, sync=normal", "mqlite"),
      find(BG, "send 1/call, 1 caller, sync=normal", "raw better-sqlite3 (normal)"),
      0.75,
    ),
    ratioTarget(
      "Enqueue batch 64 ≥ 0.9× raw batched inserts (job face)",
      find(JG, "enqueue batch 64", "mqlite"),
      find(JG, "enqueue batch 64", "raw better-sqlite3 (normal)"),
      0.9,
    ),
    ratioTarget(
      "Send batch 64 ≥ 0.75× raw batched inserts (broker face)",
      find(BG, "send batch 64, sync=normal", "mqlite"),
      find(BG, "send batch 64, sync=normal", "raw better-sqlite3 (normal)"),
      0.75,
    ),
    ratioTarget(
      "Job drain at concurrency 4 ≥ 1.0× raw claim+delete",
      find(JG, drainC4, "mqlite"),
      find(JG, drainC4, "raw better-sqlite3 (normal)"),
      1.0,
    ),
  ];
  const ours = find(JG, drainC4, "mqlite");
  const peers = all.filter(
    (m) =>
      JG.test(m.group) &&
      drainC4.test(m.scenario) &&
      !m.system.startsWith("mqlite") &&
      !m.system.startsWith("raw"),
  );
  const best = peers.sort((a, b) => b.value - a.value)[0];
  out.push(
    ours && best
      ? {
          target: "Job drain at concurrency 4 ahead of every peer",
          measured: `${fmt(ours.value)} vs best peer ${best.system} ${fmt(best.value)} jobs/s`,
          met: ours.value > best.value,
        }
      : {
          target: "Job drain at concurrency 4 ahead of every peer",
          measured: "not measured",
          met: undefined,
        },
  );
  for (const [key, ms] of [
    ["p50", 0.1],
    ["p99", 0.5],
  ] as const) {
    const lat = find(/^Latency, in-process/, new RegExp(`^enqueue→handler ${key}`), "mqlite");
    out.push({
      target: `${key} enqueue→handler ≤ ${ms} ms in-process`,
      measured: lat ? `${lat.value.toFixed(3)} ms` : "not measured",
      met: lat ? lat.value <= ms : undefined,
    });
  }
  out.push(...postgresTargets());
  const groupTarget = ratioTarget(
    "synchronous=full, 16 producers ≥ 14× one transaction per send",
    find(/^Group commit/, "send 1/call", "mqlite, 16 producers"),
    find(/^Group commit/, "send 1/call", "raw better-sqlite3, one transaction per send"),
    14,
  );
  const perCommit = find(/^Group commit/, /^messages per commit/, "mqlite, 16 producers");
  if (perCommit) groupTarget.measured += ` (${perCommit.value.toFixed(1)} messages per commit)`;
  out.push(groupTarget);

  const claims = all.filter(
    (m) => m.group.startsWith("Claim latency") && m.system === "mqlite" && m.scenario.startsWith("p50 at"),
  );
  const small = claims.find((m) => m.scenario === "p50 at 1,000");
  const big = claims.at(-1);
  out.push(
    small && big && big !== small
      ? {
          target: `Claim latency at ${big.scenario.slice(7)} ≤ 1.5× at 1,000`,
          measured: `${big.value.toFixed(3)} / ${small.value.toFixed(3)} ms: ${ratio(big, small).toFixed(2)}×`,
          met: ratio(big, small) <= 1.5,
        }
      : { target: "Claim latency at 1M ≤ 1.5× at 1k", measured: "not measured", met: undefined },
  );
  const rss = all.find((m) => m.scenario.startsWith("RSS with"));
  out.push({
    target: "RSS with 1M queued ≤ 150 MB",
    measured: rss ? `${rss.value.toFixed(0)} MB (${rss.scenario})` : "not measured",
    met: rss ? rss.value <= 150 : undefined,
  });
  const stats = all.find((m) => m.group.startsWith("Stats at") && m.system === "mqlite");
  out.push({
    target: "Stats at 1,000,000 messages < 1 ms",
    measured: stats ? `${stats.value.toFixed(3)} ms (${stats.scenario})` : "not measured",
    met: stats ? stats.value < 1 : undefined,
  });
  const stalls = all.filter(
    (m) => m.group.startsWith("/healthz while maximal") && m.scenario === "/healthz max" && m.vs,
  );
  const worstStall = stalls.sort((a, b) => b.value - a.value)[0];
  out.push({
    target: "/healthz max < 50 ms while maximal requests run",
    measured: worstStall ? `${fmt(worstStall.value)} ms (${worstStall.system})` : "not measured",
    met: worstStall ? worstStall.value < 50 : undefined,
  });
  const peaks = all.filter((m) => m.group === "Server memory through every hostile request");
  const peak = peaks.sort((a, b) => b.value - a.value)[0];
  out.push({
    target: "Server memory ≤ 100 MB over its baseline through every hostile request",
    measured: peak ? `${fmt(peak.value)} MB (${peak.scenario})` : "not measured",
    met: peak ? peak.value <= 100 : undefined,
  });
  out.push(
    ratioTarget(
      "HTTP single sends, 16 connections ≥ 0.7× a bare endpoint",
      find(/^Broker over HTTP/, "send 1/call, 16 connections", "mqlite (HTTP)"),
      find(/^Broker over HTTP/, "send 1/call, 16 connections", "bare hono endpoint"),
      0.7,
    ),
  );
  return out;
}

/** The PostgreSQL engine against graphile-worker on the same server (bench/postgres.ts). */
function postgresTargets(): Target[] {
  const JG = /^Job queue/;
  const drainC4 = /^drain [\d,]+, concurrency 4$/;
  const PG = "mqlite (PostgreSQL engine)";
  const GW = "graphile-worker 0.17";
  const ours = find(/^Latency, PostgreSQL/, /^enqueue→handler p50/, PG);
  const theirs = find(/^Latency, PostgreSQL/, /^enqueue→handler p50/, GW);
  return [
    ours && theirs
      ? {
          target: "PostgreSQL: p50 enqueue→handler no worse than graphile-worker's",
          measured: `${ours.value.toFixed(3)} / ${theirs.value.toFixed(3)} ms`,
          met: ours.value <= theirs.value,
        }
      : {
          target: "PostgreSQL: p50 enqueue→handler no worse than graphile-worker's",
          measured: "not measured",
          met: undefined,
        },
    ratioTarget(
      "PostgreSQL: job drain at concurrency 4 ≥ 5× graphile-worker",
      find(JG, drainC4, PG),
      find(JG, drainC4, GW),
      5,
    ),
    ratioTarget(
      "PostgreSQL: enqueue 1/call ≥ 1.5× graphile-worker",
      find(JG, "enqueue 1/call", PG),
      find(JG, "enqueue 1/call", GW),
      1.5,
    ),
  ];
}

const targetRows = targets();
/** What the scaling module could not measure: printed in its own section. */
const scalingSkips = runs.filter((r) => r.script === "scaling.ts").flatMap((r) => r.result?.skipped ?? []);
const results = { machine: info, targets: targetRows, modules: runs.map(({ text: _t, ...r }) => r) };
mkdirSync(join(here, "results"), { recursive: true });
const jsonPath = join(here, "results", filters.length ? `partial-${filters.join("-")}.json` : "latest.json");
writeFileSync(jsonPath, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nwrote ${jsonPath}`);

if (filters.length === 0) {
  // The chart: the job face and its peers, embedded (enqueue, batch, drain at concurrency 4).
  const JG = /^Job queue/;
  const chartScenarios = ["enqueue 1/call", "enqueue batch 64", /^drain [\d,]+, concurrency 4$/] as const;
  const groups = chartScenarios.map((s) => {
    const ms = all.filter(
      (m) => JG.test(m.group) && (typeof s === "string" ? m.scenario === s : s.test(m.scenario)),
    );
    return {
      title: ms[0]?.scenario ?? String(s),
      bars: ms.map((m) => ({ system: label(m), value: m.value })),
    };
  });
  writeFileSync(
    join(root, "docs", "benchmarks.svg"),
    barChart("Job queue: mqlite vs raw SQLite and peers", "jobs/s", groups),
  );

  const mark = (t: Target) => (t.met === undefined ? "—" : t.met ? "met" : "**not met**");
  const md: string[] = [
    "# Benchmarks",
    "",
    "Written by `npm run bench` (bench/run.ts) from one run of the whole suite; the same figures are in",
    "`bench/results/latest.json`. Every figure is the median of its rounds, each system measured in the",
    "same run as its baselines (rounds interleaved, so a noisy neighbour hurts everyone alike). Where",
    "a round lasts a fraction of a second (the job queue's enqueue scenarios), every system first runs",
    "one unmeasured round, so that no figure times the JIT compiling the code under test; so does the",
    "in-process latency scenario. Every",
    "round of a comparison starts with the heap collected (the modules run with `--expose-gc`), so that",
    "no system pays for the garbage the one before it left.",
    "The suite and the sources it measures run compiled by tsc, as the package ships them (a module",
    "run alone through `npx tsx bench/<module>.ts` runs a little slower: tsx wraps every function made",
    "at run time in a naming helper the built package does not have).",
    `Payloads are 256 bytes; drains are ${JOBS.toLocaleString("en-US")} no-op jobs. A ratio compares a figure with the named system in the same scenario:`,
    "where the two were measured in the same interleaved rounds it is the median of the rounds' own",
    "ratios (each round of one beside the same round of the other, so a drift of the machine's speed",
    "during the run moves both alike), otherwise the ratio of the two medians.",
    "To check a change, keep a copy of `bench/results/latest.json` from before it, run the bench again",
    "after it, and run `npm run bench:compare -- <before.json> bench/results/latest.json`: it lists",
    "every figure's change, compares a figure with a same-run baseline by its ratio to that baseline",
    "(so a busier machine is not a regression), and exits 1 when one got worse by more than 10%",
    "(`--threshold <percent>` to change it).",
    "The raw better-sqlite3 baselines are the least a queue can be: one table, one partial index, rows",
    "carrying the same queue name as the system they are compared with, ids that are never reused",
    "(SQLite's AUTOINCREMENT, which writes its counter in every transaction; mqlite reserves its",
    "sequence numbers in blocks instead, one write per 1,000). They keep SQLite's default checkpoint:",
    "every 1,000 WAL pages, made by the committing call. mqlite copies committed pages into the file on",
    "a thread of its own (every 10 ms while writes arrive) and a commit checkpoints only what is left,",
    "at 4,000 pages (see docs/embedded.md): part of its checkpoint work runs on the second core. In the job",
    `queue group every system, raw included, enqueues the same ${JOBS.toLocaleString("en-US")} jobs into a fresh file per round.`,
    "Claim latency by depth fills every depth first; then each round claims from every depth in turn,",
    "each in a fresh process, raw right after mqlite, so the depths of a round are measured minutes apart.",
    "",
    "## Machine",
    "",
    "| | |",
    "|---|---|",
    `| date | ${info.date} |`,
    `| CPU | ${info.cpu}, ${info.cores} cores |`,
    `| RAM | ${info.ramGiB} GiB |`,
    `| OS | ${info.os} |`,
    `| Node | ${info.node} |`,
    `| SQLite | ${info.sqlite} (better-sqlite3 ${info.betterSqlite3}) |`,
    `| load average at start (1, 5, 15 min) | ${info.loadAverageAtStart.join(", ")} |`,
    `| commit | ${info.commit} |`,
    `| rounds | ${info.rounds} |`,
    `| peers | ${Object.entries(info.peers)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")} |`,
    "",
    "The machine is shared (2 cores): figures move from run to run; the ratios within a run are what",
    "the targets are judged on.",
    "",
    "## Targets",
    "",
    "| target | measured | |",
    "|---|---|---|",
    ...targetRows.map((t) => `| ${t.target} | ${t.measured} | ${mark(t)} |`),
    "",
    "![Job queue: mqlite vs raw SQLite and peers](benchmarks.svg)",
    "",
    "## Results",
    "",
    markdownTables(all.filter((m) => !isScaling(m))),
  ];
  const allNotes = runs.flatMap((r) => r.result?.notes ?? []);
  if (all.some(isScaling))
    md.push(scalingSection(all, allNotes, scalingSkips, join(root, "docs"), `on ${info.date}`), "");
  const skipped = runs.flatMap((r) => r.result?.skipped ?? []);
  if (skipped.length) md.push("## Skipped", "", ...skipped.map((s) => `- ${s.system}: ${s.reason}`), "");
  const notes = allNotes.filter((n) => !n.startsWith(SCALING_NOTE));
  if (notes.length) md.push("## Notes", "", ...notes.map((n) => `- ${n}`), "");
  for (const r of runs.filter((r) => r.text !== undefined && r.text.trim() !== "")) {
    md.push(`## ${r.script}`, "", "```", r.text!.trim(), "```", "");
  }
  // The dated partial runs written by hand below the suite's tables outlive a full run.
  const partial = partialRunsSection(join(root, "docs", "benchmarks.md"));
  if (partial) md.push(partial, "");
  md.push(
    "## Module run times",
    "",
    "| module | seconds | exit |",
    "|---|--:|--:|",
    ...runs.map((r) => `| ${r.script} | ${r.seconds} | ${r.status} |`),
    "",
  );
  writeFileSync(join(root, "docs", "benchmarks.md"), md.join("\n"));
  console.log("wrote docs/benchmarks.md and docs/benchmarks.svg");
} else {
  const notes = runs.flatMap((r) => r.result?.notes ?? []);
  const when = `on ${info.date} (${info.cpu}, ${info.cores} cores, load ${info.loadAverageAtStart.join(" ")} at start, commit ${info.commit})`;
  if (updateScalingDocs(all, notes, scalingSkips, join(root, "docs"), when))
    console.log("wrote the scaling section of docs/benchmarks.md and its charts");
}
process.exit(runs.every((r) => r.status === 0) ? 0 : 1);

/**
 * The section of `doc` from its first `## … (partial runs)` heading to `## Module run times` (or
 * its end), trimmed; undefined when the file or the section is missing.
 */
function partialRunsSection(doc: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(doc, "utf8");
  } catch {
    return undefined;
  }
  const start = text.search(/^## .*\(partial runs\)$/m);
  if (start < 0) return undefined;
  const end = text.indexOf("\n## Module run times", start);
  return text.slice(start, end < 0 ? undefined : end).trim();
}
