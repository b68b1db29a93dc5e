// Depth: claim latency (receive of one message, peek-lock, then complete) at a backlog of 1,000,
// 100,000 and 1,000,000 messages beside raw better-sqlite3's one-row claim; the process's RSS with
// 1,000,000 messages queued; disk bytes per message; and Stats beside the same figures read from
// every row of the queue. Every depth is filled first, each in a child process; then each round
// claims from every depth in turn, each in a fresh child (so that each RSS is its own), mqlite and
// then raw. The depths of a round are measured minutes apart at most, not a whole suite apart: a
// machine that slows down for a while slows every depth alike, and the ratio between depths holds.
// Env: BENCH_BACKLOGS (comma-separated, default 1000,100000,1000000).
import { spawnSync } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { silentLogger } from "../src/contract/logger.js";
import { openBroker } from "../src/open.js";
import {
  mainIfEntry,
  median,
  PAYLOAD_256,
  percentile,
  Recorder,
  ROUNDS,
  type SuiteResult,
  scratch,
} from "./_lib.js";
import { FULL_READ_STATS, rawDb } from "./_scenarios.js";

const BACKLOGS = (process.env.BENCH_BACKLOGS ?? "1000,100000,1000000").split(",").map(Number);
const SAMPLES = 1000;

interface Depth {
  backlog: number;
  /** Per round: p50 and p99 of claim latency, ms. */
  p50: number[];
  p99: number[];
  rawP50: number[];
  /** Per round: RSS of a fresh process that opened the file with the backlog in it and claimed from it. */
  rssMb: number[];
  /** RSS of the process that filled it (its heap grew while producing). */
  fillRssMb: number;
  bytesPerMessage: number;
  /** Per round: Stats of the queue, ms (median of 5 calls). */
  statsMs: number[];
  /** Per round: the same counts and oldest age read from every row of the queue, ms. */
  fullReadStatsMs: number[];
}

type Filled = Pick<Depth, "fillRssMb" | "bytesPerMessage">;
/** One round in a fresh process: mqlite's p50 and p99, raw's p50, RSS, Stats and the full read. */
interface Claimed {
  p50: number;
  p99: number;
  rawP50: number;
  rssMb: number;
  statsMs: number;
  fullReadStatsMs: number;
}

/** Median time of five calls of `f`, ms. */
async function timed(f: () => unknown): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await f();
    samples.push(performance.now() - t);
  }
  return median(samples);
}

const fileSize = (f: string) => {
  try {
    return statSync(f).size;
  } catch {
    return 0;
  }
};

/** Child "fill": stores `backlog` messages in `path` and as many raw rows in `path.raw`; disk per message. */
async function fill(backlog: number, path: string): Promise<Filled> {
  const b = await openBroker(path, { logger: silentLogger, background: false });
  await b.createQueue("q", { lockDurationMs: 60_000 });
  const chunk = Array.from({ length: 1000 }, () => ({ body: PAYLOAD_256 }));
  for (let n = 0; n < backlog; n += 1000)
    await b.send("q", n + 1000 <= backlog ? chunk : chunk.slice(0, backlog - n));
  // Disk: after a checkpoint, the file (and what is left of the WAL) per message.
  const db = (b as unknown as { db: import("better-sqlite3").Database }).db;
  db.pragma("wal_checkpoint(TRUNCATE)");
  const bytesPerMessage = (fileSize(path) + fileSize(`${path}-wal`)) / backlog;
  const fillRssMb = process.memoryUsage().rss / 2 ** 20;
  await b.close();

  const raw = rawDb(`${path}.raw`, "normal");
  raw.db.transaction(() => {
    for (let n = 0; n < backlog; n++) raw.insert.run(raw.queue, 0, PAYLOAD_256);
  })();
  raw.close();
  return { fillRssMb, bytesPerMessage };
}

/** Raw better-sqlite3's p50 claim latency over `SAMPLES` claims (each deleted and replaced, keeping the depth). */
function rawClaimP50(path: string): number {
  const raw = rawDb(path, "normal");
  const claimOne = (): number => {
    const t = performance.now();
    const row = raw.claim.get(Date.now() + 60_000, raw.queue) as { id: number };
    const ms = performance.now() - t;
    raw.del.run(row.id);
    raw.insert.run(raw.queue, 0, PAYLOAD_256);
    return ms;
  };
  // Untimed first, as mqlite's: the statements warm and the queue's head in the page cache.
  for (let i = 0; i < SAMPLES; i++) claimOne();
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) samples.push(claimOne());
  raw.close();
  return median(samples);
}

/** Child "claim": a fresh process opens the filled file, claims and completes (keeping the depth), then raw. */
async function claim(path: string): Promise<Claimed> {
  const b = await openBroker(path, { logger: silentLogger, background: false });
  /** One claim: its latency, then complete it and send one to keep the depth. */
  const claimOne = async (): Promise<number> => {
    const t = performance.now();
    const [m] = await b.receive("q");
    const ms = performance.now() - t;
    await b.complete("q", m!.seqNumber, m!.lockToken!);
    await b.send("q", { body: PAYLOAD_256 });
    return ms;
  };
  // Untimed first: the code is compiled and the queue's head is in the page cache before the clock
  // starts, at every depth alike.
  for (let i = 0; i < SAMPLES; i++) await claimOne();
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) samples.push(await claimOne());
  const db = (b as unknown as { db: import("better-sqlite3").Database }).db;
  const fullRead = db.prepare(FULL_READ_STATS);
  const statsMs = await timed(() => b.stats("q"));
  const fullReadStatsMs = await timed(() => fullRead.all("q"));
  global.gc?.();
  const rssMb = process.memoryUsage().rss / 2 ** 20;
  await b.close();
  const rawP50 = rawClaimP50(`${path}.raw`);
  return { p50: median(samples), p99: percentile(samples, 99), rawP50, rssMb, statsMs, fullReadStatsMs };
}

/** Where the children write their answers (one scratch directory for the whole run). */
let childOut: string | undefined;

/** Runs this module in a child process in one of its modes; its JSON answer. */
function child(args: string[]): unknown {
  childOut ??= scratch("backlog-out").file("out.json");
  const out = childOut;
  const r = spawnSync(
    process.execPath,
    ["--expose-gc", ...process.execArgv, fileURLToPath(import.meta.url), ...args, out],
    { stdio: ["ignore", "inherit", "inherit"] },
  );
  if (r.status !== 0) throw new Error(`child exited with ${r.status}`);
  return JSON.parse(readFileSync(out, "utf8"));
}

export async function run(): Promise<SuiteResult> {
  const rec = new Recorder("Backlog depth: claim latency, memory, disk");
  const filled: { backlog: number; path: string; filled: Filled }[] = [];
  for (const backlog of BACKLOGS) {
    const path = scratch("backlog").file("mq.db");
    try {
      filled.push({ backlog, path, filled: child(["--fill", String(backlog), path]) as Filled });
    } catch (err) {
      rec.skip(`backlog ${backlog}`, String(err));
    }
  }
  // Round by round, every depth in turn (see the header).
  const rounds = new Map<number, Claimed[]>();
  for (let r = 0; r < ROUNDS; r++) {
    for (const f of filled) {
      try {
        const claimed = child(["--claim", f.path]) as Claimed;
        rounds.set(f.backlog, [...(rounds.get(f.backlog) ?? []), claimed]);
      } catch (err) {
        rec.skip(`backlog ${f.backlog}, round ${r + 1}`, String(err));
      }
    }
  }
  const depths: Depth[] = [];
  for (const f of filled) {
    const claimed = rounds.get(f.backlog);
    if (!claimed) continue;
    depths.push({
      backlog: f.backlog,
      ...f.filled,
      p50: claimed.map((c) => c.p50),
      p99: claimed.map((c) => c.p99),
      rawP50: claimed.map((c) => c.rawP50),
      rssMb: claimed.map((c) => c.rssMb),
      statsMs: claimed.map((c) => c.statsMs),
      fullReadStatsMs: claimed.map((c) => c.fullReadStatsMs),
    });
  }
  const group = "Claim latency by backlog depth (receive one, peek-lock)";
  // Every p50 of a round was measured in that round's pass over the depths: ratios between them
  // (mqlite beside raw, one depth beside another) are taken round by round.
  const comparison = `${rec.result.suite}: depths`;
  for (const d of depths) {
    const n = d.backlog.toLocaleString("en-US");
    const base = { group, unit: "ms", better: "lower" as const, comparison };
    rec.add({
      ...base,
      scenario: `p50 at ${n}`,
      system: "mqlite",
      mode: "embedded",
      value: median(d.p50),
      rounds: d.p50,
      vs: "raw better-sqlite3 (normal)",
    });
    rec.add({
      ...base,
      scenario: `p50 at ${n}`,
      system: "raw better-sqlite3 (normal)",
      value: median(d.rawP50),
      rounds: d.rawP50,
    });
    rec.add({
      ...base,
      scenario: `p99 at ${n}`,
      system: "mqlite",
      mode: "embedded",
      value: median(d.p99),
      rounds: d.p99,
    });
  }
  const statsGroup = "Stats by backlog depth";
  for (const d of depths) {
    const scenario = `Stats at ${d.backlog.toLocaleString("en-US")}`;
    const base = { group: statsGroup, scenario, unit: "ms", better: "lower" as const };
    rec.add({
      ...base,
      system: "mqlite",
      mode: "embedded",
      value: median(d.statsMs),
      rounds: d.statsMs,
      vs: "the same figures read from every row",
    });
    rec.add({
      ...base,
      system: "the same figures read from every row",
      value: median(d.fullReadStatsMs),
      rounds: d.fullReadStatsMs,
    });
  }
  const big = depths.at(-1);
  if (big) {
    const n = big.backlog.toLocaleString("en-US");
    const res = "Resources";
    rec.add({
      group: res,
      scenario: `RSS with ${n} messages queued (a fresh process claiming from the file)`,
      system: "mqlite",
      mode: "embedded",
      // The largest of the rounds' processes: a bound is what the figure is read for.
      value: Math.max(...big.rssMb),
      rounds: big.rssMb,
      unit: "MB",
      better: "lower",
    });
    rec.add({
      group: res,
      scenario: `RSS of the process that sent the ${n} messages`,
      system: "mqlite",
      mode: "embedded",
      value: big.fillRssMb,
      rounds: [big.fillRssMb],
      unit: "MB",
      better: "lower",
    });
    rec.add({
      group: res,
      scenario: `disk bytes per message (${n} × 256-byte bodies, after checkpoint)`,
      system: "mqlite",
      mode: "embedded",
      value: big.bytesPerMessage,
      rounds: [big.bytesPerMessage],
      unit: "B",
      better: "lower",
    });
  }
  return rec.result;
}

const mode = ["--fill", "--claim"].find((m) => process.argv.includes(m));
if (mode) {
  const args = process.argv.slice(process.argv.indexOf(mode) + 1);
  const out = mode === "--fill" ? await fill(Number(args[0]), args[1]!) : await claim(args[0]!);
  writeFileSync(args.at(-1)!, JSON.stringify(out));
  process.exit(0);
} else await mainIfEntry(import.meta.url, run);
