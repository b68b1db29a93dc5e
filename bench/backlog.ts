// Depth: claim latency (receive of one message, peek-lock, then complete) at a backlog of 1,000,
// 100,000 and 1,000,000 messages beside raw better-sqlite3's one-row claim; the process's RSS with
// 1,000,000 messages queued; disk bytes per message; and Stats beside the same figures read from
// every row of the queue. Each depth is filled in one child process
// and claimed from in a fresh one, so that each RSS is its own. Env: BENCH_BACKLOGS (comma-separated, default 1000,100000,1000000).
import { spawnSync } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { silentLogger } from "../src/engine/logger.js";
import { openBroker } from "../src/engine/open.js";
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
import { rawDb } from "./_scenarios.js";

const BACKLOGS = (process.env.BENCH_BACKLOGS ?? "1000,100000,1000000").split(",").map(Number);
const SAMPLES = 1000;

interface Depth {
  backlog: number;
  /** Per round: p50 and p99 of claim latency, ms. */
  p50: number[];
  p99: number[];
  rawP50: number[];
  /** RSS of a fresh process that opened the file with the backlog in it and claimed from it. */
  rssMb: number;
  /** RSS of the process that filled it (its heap grew while producing). */
  fillRssMb: number;
  bytesPerMessage: number;
  /** Per round: Stats of the queue, ms (median of 5 calls). */
  statsMs: number[];
  /** Per round: the same counts and oldest age read from every row of the queue, ms. */
  fullReadStatsMs: number[];
}

type Filled = Pick<Depth, "rawP50" | "fillRssMb" | "bytesPerMessage">;
type Claimed = Pick<Depth, "p50" | "p99" | "rssMb" | "statsMs" | "fullReadStatsMs">;

/** Stats as a query that reads every row of the queue (the baseline Stats is measured against). */
const FULL_READ_STATS = `SELECT state, count(*) AS n, min(CASE WHEN state IN ('active', 'locked') THEN enqueued_at END)
  FROM messages WHERE queue = ? GROUP BY state`;

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

/** Child "fill": stores `backlog` messages in `path`; disk per message; raw better-sqlite3's claim latency. */
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
  const rawP50: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const samples: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t = performance.now();
      const row = raw.claim.get(Date.now() + 60_000, raw.queue) as { id: number };
      samples.push(performance.now() - t);
      raw.del.run(row.id);
      raw.insert.run(raw.queue, 0, PAYLOAD_256);
    }
    rawP50.push(median(samples));
  }
  raw.close();
  return { rawP50, fillRssMb, bytesPerMessage };
}

/** Child "claim": a fresh process opens the filled file and claims and completes, keeping the depth. */
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
  // Untimed first, as the raw baseline's statements are warm from its fill: the code is compiled
  // and the queue's head is in the page cache before the clock starts, at every depth alike.
  for (let i = 0; i < SAMPLES; i++) await claimOne();
  const p50: number[] = [];
  const p99: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const samples: number[] = [];
    for (let i = 0; i < SAMPLES; i++) samples.push(await claimOne());
    p50.push(median(samples));
    p99.push(percentile(samples, 99));
  }
  const db = (b as unknown as { db: import("better-sqlite3").Database }).db;
  const fullRead = db.prepare(FULL_READ_STATS);
  const statsMs: number[] = [];
  const fullReadStatsMs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    statsMs.push(await timed(() => b.stats("q")));
    fullReadStatsMs.push(await timed(() => fullRead.all("q")));
  }
  global.gc?.();
  const rssMb = process.memoryUsage().rss / 2 ** 20;
  await b.close();
  return { p50, p99, rssMb, statsMs, fullReadStatsMs };
}

/** Runs this module in a child process in one of its modes; its JSON answer. */
function child(args: string[]): unknown {
  const out = scratch("backlog-out").file("out.json");
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
  const depths: Depth[] = [];
  for (const backlog of BACKLOGS) {
    const path = scratch("backlog").file("mq.db");
    try {
      const filled = child(["--fill", String(backlog), path]) as Filled;
      const claimed = child(["--claim", path]) as Claimed;
      depths.push({ backlog, ...filled, ...claimed });
    } catch (err) {
      rec.skip(`backlog ${backlog}`, String(err));
    }
  }
  const group = "Claim latency by backlog depth (receive one, peek-lock)";
  for (const d of depths) {
    const n = d.backlog.toLocaleString("en-US");
    const base = { group, unit: "ms", better: "lower" as const };
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
      value: big.rssMb,
      rounds: [big.rssMb],
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
