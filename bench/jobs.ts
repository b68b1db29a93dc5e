// The job face beside its peers, in one run: enqueue one at a time, enqueue in bulk, and drain
// 20,000 no-op jobs at worker concurrency 1, 4 and 16 — mqlite's Queue, plainjob (SQLite) and
// BullMQ (Redis on 127.0.0.1:6379, skipped when it does not answer), with raw better-sqlite3
// claim+delete as the floor; plus the in-process enqueue→handler latency.
// Env: BENCH_JOBS (default 20000), BENCH_SINGLE (default 5000), BENCH_LATENCY (default 2000).
import { createConnection } from "node:net";
import Database from "better-sqlite3";
import { Queue as BullQueue, Worker as BullWorker } from "bullmq";
import { better, defineQueue, defineWorker } from "plainjob";
import { Queue } from "../src/jobs/index.js";
import { median, percentile, scratch } from "./_lib.js";

const N = Number(process.env.BENCH_JOBS ?? 20_000);
const SINGLE = Number(process.env.BENCH_SINGLE ?? 5000);
const LATENCY = Number(process.env.BENCH_LATENCY ?? 2000);
const CONCURRENCY = [1, 4, 16];
const tmp = scratch("jobs");
let fileNo = 0;
const file = (name: string) => tmp.file(`${name}-${fileNo++}.db`);
const perSec = (n: number, ms: number) => (n * 1000) / ms;
const silent = { error() {}, warn() {}, info() {}, debug() {} };

// --- mqlite ---------------------------------------------------------------------------------------

function ours(): Queue<{ noop: () => void }> {
  return new Queue({ dbPath: file("mqlite") }).task("noop", () => {});
}

async function oursEnqueueOne(): Promise<number> {
  const q = ours();
  await q.enqueue("noop", []);
  const t = performance.now();
  for (let i = 0; i < SINGLE; i++) await q.enqueue("noop", []);
  const r = perSec(SINGLE, performance.now() - t);
  await q.close();
  return r;
}

async function oursEnqueueBulk(): Promise<number> {
  const q = ours();
  const t = performance.now();
  for (let i = 0; i < N; i += 1000) {
    await q.enqueueMany(
      "noop",
      Array.from({ length: Math.min(1000, N - i) }, () => ({ args: [] })),
    );
  }
  const r = perSec(N, performance.now() - t);
  await q.close();
  return r;
}

async function oursDrain(concurrency: number): Promise<number> {
  const q = ours();
  for (let i = 0; i < N; i += 1000) {
    await q.enqueueMany(
      "noop",
      Array.from({ length: Math.min(1000, N - i) }, () => ({ args: [] })),
    );
  }
  let done = 0;
  const t = performance.now();
  await new Promise<void>((resolve) => {
    q.on("job.completed", () => {
      if (++done === N) resolve();
    });
    q.runWorker({ concurrency });
  });
  const r = perSec(N, performance.now() - t);
  await q.close();
  return r;
}

/** p50/p99 from enqueue() call to handler start, one job at a time, worker idle and waiting. */
async function oursLatency(): Promise<{ p50: number; p99: number }> {
  let started: (at: number) => void = () => {};
  const q = new Queue({ dbPath: file("latency") }).task("ping", () => started(performance.now()));
  q.runWorker({ concurrency: 1 });
  const samples: number[] = [];
  for (let i = 0; i < LATENCY + 100; i++) {
    const handled = new Promise<number>((r) => {
      started = r;
    });
    const t = performance.now();
    await q.enqueue("ping", []);
    const at = await handled;
    if (i >= 100) samples.push(at - t);
    await new Promise((r) => setImmediate(r));
  }
  await q.close();
  return { p50: median(samples), p99: percentile(samples, 99) };
}

// --- raw better-sqlite3: the floor ------------------------------------------------------------------

function rawDrain(): number {
  const db = new Database(file("raw"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(`CREATE TABLE m (id INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL, state TEXT NOT NULL,
    enqueued_at INTEGER NOT NULL, locked_until INTEGER NOT NULL DEFAULT 0, body BLOB NOT NULL) STRICT;
    CREATE INDEX m_claim ON m (queue, id) WHERE state = 'active';`);
  const insert = db.prepare("INSERT INTO m (queue, state, enqueued_at, body) VALUES ('q', 'active', ?, ?)");
  const body = Buffer.from("[]");
  db.transaction(() => {
    for (let i = 0; i < N; i++) insert.run(Date.now(), body);
  })();
  const claim = db.prepare(`UPDATE m SET state = 'locked', locked_until = ? WHERE id =
    (SELECT id FROM m WHERE queue = 'q' AND state = 'active' ORDER BY id LIMIT 1) RETURNING id, body`);
  const del = db.prepare("DELETE FROM m WHERE id = ?");
  const t = performance.now();
  for (let i = 0; i < N; i++) {
    const row = claim.get(Date.now() + 30_000) as { id: number };
    del.run(row.id);
  }
  const r = perSec(N, performance.now() - t);
  db.close();
  return r;
}

// --- plainjob ---------------------------------------------------------------------------------------

function plainQueue() {
  const db = new Database(file("plainjob"));
  return defineQueue({ connection: better(db), logger: silent, maintenanceInterval: 3_600_000 });
}

function plainEnqueueOne(): number {
  const q = plainQueue();
  const t = performance.now();
  for (let i = 0; i < SINGLE; i++) q.add("noop", {});
  const r = perSec(SINGLE, performance.now() - t);
  q.close();
  return r;
}

function plainEnqueueBulk(): number {
  const q = plainQueue();
  const t = performance.now();
  for (let i = 0; i < N; i += 1000)
    q.addMany(
      "noop",
      Array.from({ length: Math.min(1000, N - i) }, () => ({})),
    );
  const r = perSec(N, performance.now() - t);
  q.close();
  return r;
}

async function plainDrain(concurrency: number): Promise<number> {
  const q = plainQueue();
  for (let i = 0; i < N; i += 1000)
    q.addMany(
      "noop",
      Array.from({ length: Math.min(1000, N - i) }, () => ({})),
    );
  let done = 0;
  let finish: () => void = () => {};
  const finished = new Promise<void>((r) => {
    finish = r;
  });
  const workers = Array.from({ length: concurrency }, () =>
    defineWorker("noop", () => {}, {
      queue: q,
      logger: silent,
      pollIntervall: 10,
      onCompleted: () => {
        if (++done === N) finish();
      },
    }),
  );
  const t = performance.now();
  for (const w of workers) void w.start();
  await finished;
  const r = perSec(N, performance.now() - t);
  await Promise.all(workers.map((w) => w.stop()));
  q.close();
  return r;
}

// --- BullMQ -----------------------------------------------------------------------------------------

const redis = { host: "127.0.0.1", port: 6379 };

function redisAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(redis);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (d) => done(d.toString().startsWith("+PONG")));
  });
}

let bullNo = 0;
function bullQueue(): BullQueue {
  return new BullQueue(`mqlite-bench-${process.pid}-${bullNo++}`, { connection: redis });
}

async function bullDispose(q: BullQueue): Promise<void> {
  await q.obliterate({ force: true });
  await q.close();
}

async function bullEnqueueOne(): Promise<number> {
  const q = bullQueue();
  await q.waitUntilReady();
  const t = performance.now();
  for (let i = 0; i < SINGLE; i++) await q.add("noop", {}, { removeOnComplete: true });
  const r = perSec(SINGLE, performance.now() - t);
  await bullDispose(q);
  return r;
}

async function bullFill(q: BullQueue): Promise<void> {
  for (let i = 0; i < N; i += 1000) {
    await q.addBulk(
      Array.from({ length: Math.min(1000, N - i) }, () => ({
        name: "noop",
        data: {},
        opts: { removeOnComplete: true },
      })),
    );
  }
}

async function bullEnqueueBulk(): Promise<number> {
  const q = bullQueue();
  await q.waitUntilReady();
  const t = performance.now();
  await bullFill(q);
  const r = perSec(N, performance.now() - t);
  await bullDispose(q);
  return r;
}

async function bullDrain(concurrency: number): Promise<number> {
  const q = bullQueue();
  await bullFill(q);
  let done = 0;
  let finish: () => void = () => {};
  const finished = new Promise<void>((r) => {
    finish = r;
  });
  const t = performance.now();
  const w = new BullWorker(q.name, async () => {}, { connection: redis, concurrency });
  w.on("completed", () => {
    if (++done === N) finish();
  });
  await finished;
  const r = perSec(N, performance.now() - t);
  await w.close();
  await bullDispose(q);
  return r;
}

// --- report -----------------------------------------------------------------------------------------

const fmt = (n: number | undefined) => (n === undefined ? "—" : Math.round(n).toLocaleString("en-US"));
const ratio = (a: number, b: number | undefined) => (b === undefined ? "—" : `${(a / b).toFixed(2)}×`);

interface Line {
  scenario: string;
  ours: number;
  raw?: number;
  plainjob: number;
  bullmq?: number;
}

async function main(): Promise<void> {
  const bull = await redisAnswers();
  if (!bull) console.log("BullMQ: Redis on 127.0.0.1:6379 does not answer; BullMQ is skipped.");
  const lines: Line[] = [];
  lines.push({
    scenario: `enqueue 1 at a time (${SINGLE})`,
    ours: await oursEnqueueOne(),
    plainjob: plainEnqueueOne(),
    bullmq: bull ? await bullEnqueueOne() : undefined,
  });
  lines.push({
    scenario: `enqueue in bulk (${N}, 1000/call)`,
    ours: await oursEnqueueBulk(),
    plainjob: plainEnqueueBulk(),
    bullmq: bull ? await bullEnqueueBulk() : undefined,
  });
  const raw = rawDrain();
  for (const c of CONCURRENCY) {
    lines.push({
      scenario: `drain ${N} no-op jobs, concurrency ${c}`,
      ours: await oursDrain(c),
      raw,
      plainjob: await plainDrain(c),
      bullmq: bull ? await bullDrain(c) : undefined,
    });
  }
  console.log(
    "\n### Jobs: mqlite Queue vs plainjob and BullMQ (jobs/s; raw = better-sqlite3 claim+delete)\n",
  );
  console.log("| scenario | mqlite | raw floor | plainjob | BullMQ | vs raw | vs plainjob | vs BullMQ |");
  console.log("|---|--:|--:|--:|--:|--:|--:|--:|");
  for (const l of lines) {
    console.log(
      `| ${l.scenario} | ${fmt(l.ours)} | ${fmt(l.raw)} | ${fmt(l.plainjob)} | ${fmt(l.bullmq)} | ${ratio(l.ours, l.raw)} | ${ratio(l.ours, l.plainjob)} | ${ratio(l.ours, l.bullmq)} |`,
    );
  }
  const lat = await oursLatency();
  console.log(
    `\nenqueue→handler latency in-process (${LATENCY} jobs, one at a time): p50 ${lat.p50.toFixed(3)} ms, p99 ${lat.p99.toFixed(3)} ms`,
  );
}

await main();
