// How cost grows: five series, each point measured beside its baseline in the same interleaved
// rounds, drawn as one chart each by run.ts (docs/benchmarks-*.svg).
// - claim latency against backlog depth (1k → 1M), beside raw better-sqlite3's one-row claim;
// - job drain against worker concurrency (1 → 64), beside raw claim+delete loops at the same count;
// - synchronous=full sends against concurrent producers (1 → 64), beside one transaction per send;
// - HTTP Send and Receive against keep-alive connections (1 → 256), beside a bare endpoint of the
//   same HTTP stack (the server of bench/http.ts, in a child process);
// - PostgreSQL job drain against worker processes (1 → 8), beside graphile-worker in as many processes.
// Env: BENCH_SCALING_QUICK=1 (fewer points, one round, shorter rounds), BENCH_ROUNDS, BENCH_MS,
// BENCH_DURATION (s per HTTP round), BENCH_SCALING_JOBS (jobs per drain), MQLITE_BENCH_PG.
import { type ChildProcess, spawn } from "node:child_process";
import { extname } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { run as graphileRun, Logger, makeWorkerUtils } from "graphile-worker";
import pg from "pg";
import { connect } from "../src/client/index.js";
import { silentLogger } from "../src/contract/logger.js";
import { openBroker, type PostgresDsn } from "../src/open.js";
import { SqliteBroker } from "../src/store/sqlite/sqlite-broker.js";
import {
  type Contender,
  JOB_ARG,
  type Measurement,
  mainIfEntry,
  median,
  PAYLOAD_256,
  PG_DSN,
  Recorder,
  type SuiteResult,
  scratch,
  sleep,
  tcpAnswers,
} from "./_lib.js";
import { SCALING_NOTE, SCALING_PREFIX } from "./_scaling-doc.js";
import { drain, JOB_QUEUE, noopQueue, rawDb, rawSendOne, sendRate } from "./_scenarios.js";

const QUICK = process.env.BENCH_SCALING_QUICK === "1";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const MS = Number(process.env.BENCH_MS ?? (QUICK ? 1000 : 1500));
const DURATION = Number(process.env.BENCH_DURATION ?? (QUICK ? 2 : 3));
const JOBS = Number(process.env.BENCH_SCALING_JOBS ?? (QUICK ? 5000 : 20_000));
const pick = (full: number[], quick: number[]) => (QUICK ? quick : full);
const BACKLOGS = pick([1e3, 3e3, 1e4, 3e4, 1e5, 3e5, 1e6], [1e3, 1e4, 1e5, 1e6]);
const CONSUMERS = pick([1, 2, 4, 8, 16, 32, 64], [1, 4, 16, 64]);
const PRODUCERS = pick([1, 2, 4, 8, 16, 32, 64], [1, 4, 16, 64]);
const CONNECTIONS = pick([1, 4, 16, 64, 256], [1, 16, 256]);
const PROCESSES = (process.env.BENCH_SCALING_PROCESSES ?? "1,2,4,8").split(",").map(Number);
/** Concurrency of each PostgreSQL worker process. */
const PER_PROCESS = 4;
/**
 * Connections of each worker process's pool: its concurrency and one (8 processes of the default
 * 10 would take most of the server's 100, which a shared server may not have to spare).
 */
const POOL = PER_PROCESS + 1;
const CLAIM_SAMPLES = QUICK ? 500 : 1000;

const n = (v: number) => v.toLocaleString("en-US");

/** Tags a point's figures with its x value (the chart's axis). */
function at(x: number, ms: Measurement[]): void {
  for (const m of ms) m.x = x;
}

// --- claim latency against backlog -------------------------------------------------------------

/** Per depth, grown in one file: mqlite's and raw's p50 claim latency, rounds interleaved. */
async function backlog(rec: Recorder): Promise<void> {
  const tmp = scratch("scaling-backlog");
  const b = new SqliteBroker(tmp.file("mq.db"), { logger: silentLogger });
  await b.createQueue("q", { lockDurationMs: 60_000 });
  const raw = rawDb(tmp.file("raw.db"), "normal");
  const chunk = Array.from({ length: 1000 }, () => ({ body: PAYLOAD_256 }));
  let depth = 0;
  const ours = async (): Promise<number> => {
    const samples: number[] = [];
    for (let i = 0; i < 2 * CLAIM_SAMPLES; i++) {
      const t = performance.now();
      const [m] = await b.receive("q");
      const ms = performance.now() - t;
      await b.complete("q", m!.seqNumber, m!.lockToken!);
      await b.send("q", { body: PAYLOAD_256 });
      // The first half warms the statements and the queue's head in the page cache.
      if (i >= CLAIM_SAMPLES) samples.push(ms);
    }
    return median(samples);
  };
  const rawClaim = (): number => {
    const samples: number[] = [];
    for (let i = 0; i < 2 * CLAIM_SAMPLES; i++) {
      const t = performance.now();
      const row = raw.claim.get(Date.now() + 60_000, raw.queue) as { id: number };
      const ms = performance.now() - t;
      raw.del.run(row.id);
      raw.insert.run(raw.queue, 0, PAYLOAD_256);
      if (i >= CLAIM_SAMPLES) samples.push(ms);
    }
    return median(samples);
  };
  try {
    for (const target of BACKLOGS) {
      const add = target - depth;
      for (let i = 0; i < add; i += 1000)
        await b.send("q", i + 1000 <= add ? chunk : chunk.slice(0, add - i));
      raw.db.transaction(() => {
        for (let i = 0; i < add; i++) raw.insert.run(raw.queue, 0, PAYLOAD_256);
      })();
      depth = target;
      const ms = await rec.compare(
        {
          group: `${SCALING_PREFIX}claim latency against backlog`,
          scenario: `p50 claim at ${n(target)} queued`,
          unit: "ms",
          better: "lower",
          rounds: ROUNDS,
        },
        [
          { system: "mqlite", mode: "embedded", vs: "raw better-sqlite3 (normal)", round: ours },
          { system: "raw better-sqlite3 (normal)", round: rawClaim },
        ],
      );
      at(target, ms);
    }
  } finally {
    await b.close();
    raw.close();
    tmp.cleanup();
  }
}

// --- drain against consumers -------------------------------------------------------------------

/** Raw: fills `jobs` rows, then `concurrency` loops claim one, yield (the handler), delete it. */
async function rawDrainConcurrent(file: string, concurrency: number): Promise<number> {
  const r = rawDb(file, "normal", JOB_QUEUE);
  try {
    const body = Buffer.from(JSON.stringify([JOB_ARG]));
    r.db.transaction(() => {
      for (let i = 0; i < JOBS; i++) r.insert.run(r.queue, Date.now(), body);
    })();
    const t = performance.now();
    let done = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (;;) {
          const row = r.claim.get(Date.now() + 30_000, r.queue) as { id: number } | undefined;
          if (!row) return;
          await null; // a no-op async handler
          r.del.run(row.id);
          done++;
        }
      }),
    );
    if (done !== JOBS) throw new Error(`raw drain completed ${done} of ${JOBS}`);
    return (JOBS * 1000) / (performance.now() - t);
  } finally {
    r.close();
  }
}

async function drainCurve(rec: Recorder): Promise<void> {
  const tmp = scratch("scaling-drain");
  let file = 0;
  for (const c of CONSUMERS) {
    const ms = await rec.compare(
      {
        group: `${SCALING_PREFIX}job drain against consumers`,
        scenario: `drain ${n(JOBS)}, concurrency ${c}`,
        unit: "jobs/s",
        better: "higher",
        rounds: ROUNDS,
      },
      [
        {
          system: "mqlite",
          mode: "embedded",
          vs: "raw claim+delete",
          round: async () => {
            const q = noopQueue({ dbPath: tmp.file(`mq-${file++}.db`) });
            try {
              return await drain(q, c, JOBS);
            } finally {
              await q.close();
            }
          },
        },
        { system: "raw claim+delete", round: () => rawDrainConcurrent(tmp.file(`raw-${file++}.db`), c) },
      ],
    );
    at(c, ms);
  }
  tmp.cleanup();
}

// --- synchronous=full against producers --------------------------------------------------------

async function groupCommit(rec: Recorder): Promise<void> {
  const tmp = scratch("scaling-full");
  let file = 0;
  for (const p of PRODUCERS) {
    let b: SqliteBroker;
    let r: ReturnType<typeof rawDb>;
    const ms = await rec.compare(
      {
        group: `${SCALING_PREFIX}synchronous=full sends against producers`,
        scenario: `send 1/call, ${p} producer${p > 1 ? "s" : ""}`,
        unit: "msg/s",
        better: "higher",
        rounds: ROUNDS,
      },
      [
        {
          system: "mqlite",
          mode: "embedded",
          vs: "raw, one transaction per send",
          setup: async () => {
            b = new SqliteBroker(tmp.file(`mq-${file++}.db`), { synchronous: "full", logger: silentLogger });
            await b.createQueue("q");
          },
          round: () => sendRate(b, "q", p, 1, MS),
          teardown: () => b.close(),
        },
        {
          system: "raw, one transaction per send",
          setup: () => {
            r = rawDb(tmp.file(`raw-${file++}.db`), "full");
          },
          round: () => rawSendOne(r, MS),
          teardown: () => r.close(),
        },
      ],
    );
    at(p, ms);
  }
  tmp.cleanup();
}

// --- HTTP against connections ------------------------------------------------------------------

const TOKEN = "bench-token";
const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

/** The server of bench/http.ts (broker with queue "bench", and the bare endpoint) in a child. */
function startHttpChild(): Promise<{ child: ChildProcess; urls: { mqlite: string; bare: string } }> {
  // Beside this module: http.ts through tsx, http.js compiled (see run.ts).
  const script = fileURLToPath(new URL(`./http${extname(fileURLToPath(import.meta.url))}`, import.meta.url));
  const child = spawn(process.execPath, [...process.execArgv, script, "--serve"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve({ child, urls: JSON.parse(line) });
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
}

async function cannon(url: string, body: string, connections: number): Promise<number> {
  const r = await autocannon({ url, method: "POST", headers, body, connections, duration: DURATION });
  const errors = r.errors + r.timeouts + r.non2xx;
  if (errors > 0) throw new Error(`${errors} failed requests`);
  return r.requests.average;
}

async function httpCurve(rec: Recorder): Promise<void> {
  const { child, urls } = await startHttpChild();
  const client = connect(urls.mqlite, { token: TOKEN });
  const service = `${urls.mqlite}/mqlite.v1.QueueService`;
  const sendBody = JSON.stringify({ queue: "bench", messages: [{ body: PAYLOAD_256.toString("base64") }] });
  const receiveBody = JSON.stringify({ queue: "bench", max_messages: 1, receive_mode: 1 });
  const bare = (body: string, c: number): Contender => ({
    system: "bare hono endpoint",
    round: () => cannon(`${urls.bare}/bare`, body, c),
  });
  /** Enough messages that no Receive round runs the queue dry (checked after each). */
  const refill = async (count: number) => {
    const batch = Array.from({ length: 1000 }, () => ({ body: PAYLOAD_256 }));
    for (let i = 0; i < count; i += 1000) await client.send("bench", batch);
  };
  try {
    await cannon(`${urls.bare}/bare`, "{}", 8);
    await cannon(`${service}/Send`, sendBody, 8);
    for (const c of CONNECTIONS) {
      const send = await rec.compare(
        {
          group: `${SCALING_PREFIX}HTTP Send against connections`,
          scenario: `send 1/call, ${c} connection${c > 1 ? "s" : ""}`,
          unit: "req/s",
          better: "higher",
          rounds: ROUNDS,
        },
        [
          {
            system: "mqlite",
            mode: "http",
            vs: "bare hono endpoint",
            round: () => cannon(`${service}/Send`, sendBody, c),
          },
          bare(sendBody, c),
        ],
      );
      at(c, send);
    }
    for (const c of CONNECTIONS) {
      const receive = await rec.compare(
        {
          group: `${SCALING_PREFIX}HTTP Receive against connections`,
          scenario: `receive 1/call (receive-and-delete), ${c} connection${c > 1 ? "s" : ""}`,
          unit: "req/s",
          better: "higher",
          rounds: ROUNDS,
        },
        [
          {
            system: "mqlite",
            mode: "http",
            vs: "bare hono endpoint",
            setup: () => refill(DURATION * 20_000),
            round: async () => {
              const rate = await cannon(`${service}/Receive`, receiveBody, c);
              const left = await client.receive("bench", { mode: "receive-and-delete" });
              if (left.length === 0) throw new Error("the queue ran dry during the round");
              await refill(Math.ceil((rate * DURATION) / 1000) * 1000);
              return rate;
            },
          },
          bare(receiveBody, c),
        ],
      );
      at(c, receive);
    }
  } finally {
    await client.close?.();
    child.kill("SIGTERM");
  }
}

// --- PostgreSQL drain against worker processes -------------------------------------------------

const PG_SCHEMA = { mqlite: "bench_scaling_mqlite", graphile: "bench_scaling_graphile" };

async function sql(text: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_DSN });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

/**
 * Child "--pg-worker <system>": sets up, prints "ready", starts its worker (concurrency
 * PER_PROCESS) when "go" arrives on stdin, and prints its completed count every 20 ms.
 */
async function pgWorker(system: string): Promise<void> {
  let done = 0;
  let start: () => Promise<unknown>;
  if (system === "mqlite") {
    const broker = await openBroker(PG_DSN as PostgresDsn, {
      schema: PG_SCHEMA.mqlite,
      poolSize: POOL,
      logger: silentLogger,
    });
    const q = noopQueue({ broker });
    q.on("job.completed", () => {
      done++;
    });
    await q.broker();
    start = async () => q.runWorker({ concurrency: PER_PROCESS });
  } else {
    start = () =>
      graphileRun({
        connectionString: PG_DSN,
        schema: PG_SCHEMA.graphile,
        concurrency: PER_PROCESS,
        maxPoolSize: POOL,
        noHandleSignals: true,
        pollInterval: 100,
        logger: new Logger(() => () => {}),
        taskList: {
          noop: async () => {
            done++;
          },
        },
      });
  }
  process.stdout.write("ready\n");
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line !== "go") continue;
    setInterval(() => process.stdout.write(`${done}\n`), 20);
    await start();
  }
}

/** Fills the queue, starts `processes` worker children, and times the drain from "go"; jobs/s. */
async function pgDrain(system: "mqlite" | "graphile", processes: number): Promise<number> {
  const schema = PG_SCHEMA[system];
  await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const payload = [JOB_ARG];
  if (system === "mqlite") {
    const q = noopQueue({ dsn: PG_DSN, schema });
    const items = Array.from({ length: 1000 }, () => ({ args: payload as [string] }));
    for (let i = 0; i < JOBS; i += 1000)
      await q.enqueueMany("noop", items.slice(0, Math.min(1000, JOBS - i)));
    await q.close();
  } else {
    const u = await makeWorkerUtils({ connectionString: PG_DSN, schema });
    await u.migrate();
    for (let i = 0; i < JOBS; i += 1000)
      await u.addJobs(
        Array.from({ length: Math.min(1000, JOBS - i) }, () => ({
          identifier: "noop",
          payload: { p: JOB_ARG },
        })),
      );
    await u.release();
  }
  const counts = new Array<number>(processes).fill(0);
  const children = Array.from({ length: processes }, () =>
    spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--pg-worker", system], {
      stdio: ["pipe", "pipe", "inherit"],
    }),
  );
  try {
    let finished!: () => void;
    const allDone = new Promise<void>((r) => {
      finished = r;
    });
    const ready = children.map(
      (child, i) =>
        new Promise<void>((resolve, reject) => {
          child.once("exit", (code) => reject(new Error(`worker exited with ${code}`)));
          createInterface({ input: child.stdout! }).on("line", (line) => {
            if (line === "ready") return resolve();
            counts[i] = Number(line);
            if (counts.reduce((a, b) => a + b, 0) >= JOBS) finished();
          });
        }),
    );
    await Promise.all(ready);
    const t = performance.now();
    for (const child of children) child.stdin!.write("go\n");
    const cap = sleep(60_000).then(() => {
      throw new Error(`drain not done in 60 s (${counts.reduce((a, b) => a + b, 0)} of ${JOBS})`);
    });
    await Promise.race([allDone, cap]);
    return (JOBS * 1000) / (performance.now() - t);
  } finally {
    for (const child of children) child.kill("SIGKILL");
  }
}

async function pgCurve(rec: Recorder): Promise<void> {
  if (!(await tcpAnswers(5432))) {
    rec.skip("PostgreSQL drain against worker processes", "PostgreSQL on 127.0.0.1:5432 does not answer");
    return;
  }
  try {
    for (const p of PROCESSES) {
      const ms = await rec.compare(
        {
          group: `${SCALING_PREFIX}PostgreSQL job drain against worker processes`,
          scenario: `drain ${n(JOBS)}, ${p} process${p > 1 ? "es" : ""} × concurrency ${PER_PROCESS}`,
          unit: "jobs/s",
          better: "higher",
          rounds: ROUNDS,
        },
        [
          {
            system: "mqlite (PostgreSQL engine)",
            vs: "graphile-worker 0.17",
            round: () => pgDrain("mqlite", p),
          },
          { system: "graphile-worker 0.17", round: () => pgDrain("graphile", p) },
        ],
      );
      at(p, ms);
    }
  } finally {
    for (const s of Object.values(PG_SCHEMA)) await sql(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  }
}

export async function run(): Promise<SuiteResult> {
  const rec = new Recorder("How cost grows");
  const only = process.env.BENCH_SCALING_ONLY?.split(",");
  const parts: [string, (r: Recorder) => Promise<void>][] = [
    ["backlog", backlog],
    ["drain", drainCurve],
    ["full", groupCommit],
    ["http", httpCurve],
    ["postgres", pgCurve],
  ];
  for (const [name, part] of parts) {
    if (only && !only.includes(name)) continue;
    const t = performance.now();
    await part(rec);
    console.error(`  [scaling] ${name}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  rec.note(
    QUICK
      ? `${SCALING_NOTE}quick mode (BENCH_SCALING_QUICK=1): ${ROUNDS} round(s) per point, fewer points, ${n(JOBS)} jobs per drain, ${MS} ms per send round, ${DURATION} s per HTTP round.`
      : `${SCALING_NOTE}${ROUNDS} rounds per point, ${n(JOBS)} jobs per drain, ${MS} ms per send round, ${DURATION} s per HTTP round.`,
  );
  rec.note(
    `${SCALING_NOTE}claim latency grows one file per system through every depth (claims complete and re-send, keeping the depth); PostgreSQL workers are ${PER_PROCESS}-concurrency processes started before the clock, which starts when they are told to go.`,
  );
  return rec.result;
}

if (process.argv.includes("--pg-worker")) {
  await pgWorker(process.argv[process.argv.indexOf("--pg-worker") + 1]!);
} else await mainIfEntry(import.meta.url, run);
