// mqlite on PostgreSQL beside our own SQLite engine, and beside pg-boss 10 and graphile-worker 0.17
// on the same server, in one run:
//  - send throughput (4 producers, one message per call; and batches of 64),
//  - end-to-end throughput (4 producers, 4 consumers receiving up to 16 and completing each),
//  - enqueue then drain N no-op jobs (4 enqueuers one job per call, then 4 workers).
// Env: MQLITE_BENCH_PG (default postgres://postgres@127.0.0.1:5432/postgres), BENCH_MS, BENCH_JOBS.
import { run as graphileRun, makeWorkerUtils } from "graphile-worker";
import pg from "pg";
import PgBoss from "pg-boss";
import type { Broker } from "../src/contract/broker.js";
import { silentLogger } from "../src/engine/logger.js";
import { openBroker } from "../src/open.js";
import { PAYLOAD_256, scratch } from "./_lib.js";

const DSN = process.env.MQLITE_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/postgres";
const DURATION_MS = Number(process.env.BENCH_MS ?? 2000);
const JOBS = Number(process.env.BENCH_JOBS ?? 5000);
/** Unmeasured time first: pool connections open and statements get prepared (for both engines). */
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 1000);
const SCHEMAS = { mqlite: "bench_mqlite", pgboss: "bench_pgboss", graphile: "bench_graphile" };
const tmp = scratch("postgres");
let fileNo = 0;

async function sql(text: string): Promise<void> {
  const c = new pg.Client({ connectionString: DSN });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

async function dropSchemas(): Promise<void> {
  for (const s of Object.values(SCHEMAS)) await sql(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
}

type Engine = "postgres" | "postgres-async" | "sqlite";

async function open(engine: Engine): Promise<Broker> {
  if (engine !== "sqlite") {
    await sql(`DROP SCHEMA IF EXISTS ${SCHEMAS.mqlite} CASCADE`);
    return openBroker(DSN, {
      schema: SCHEMAS.mqlite,
      logger: silentLogger,
      poolSize: 10,
      synchronousCommit: engine === "postgres" ? "on" : "off",
    });
  }
  return openBroker(tmp.file(`sqlite-${fileNo++}.db`), { logger: silentLogger, synchronous: "normal" });
}

async function forDuration(workers: number, step: () => Promise<number>): Promise<number> {
  let stop = false;
  let ops = 0;
  const loops = Array.from({ length: workers }, async () => {
    while (!stop) ops += await step();
  });
  await new Promise((r) => setTimeout(r, WARMUP_MS));
  ops = 0;
  const start = performance.now();
  await new Promise((r) => setTimeout(r, DURATION_MS));
  stop = true;
  const elapsed = performance.now() - start;
  const counted = ops;
  await Promise.all(loops);
  return (counted * 1000) / elapsed;
}

async function sendRate(engine: Engine, batch: number): Promise<number> {
  const b = await open(engine);
  await b.createQueue("q", { lockDurationMs: 60_000 });
  const msgs = Array.from({ length: batch }, () => ({ body: PAYLOAD_256 }));
  const r = await forDuration(4, async () => (await b.send("q", batch === 1 ? msgs[0]! : msgs)).length);
  await b.close();
  return r;
}

async function endToEnd(engine: Engine): Promise<number> {
  const b = await open(engine);
  await b.createQueue("q", { lockDurationMs: 60_000, maxDeliveryCount: 1000 });
  let completed = 0;
  let stop = false;
  const producers = Array.from({ length: 4 }, async () => {
    while (!stop) await b.send("q", { body: PAYLOAD_256 });
  });
  const consumers = Array.from({ length: 4 }, async () => {
    while (!stop) {
      const got = await b.receive("q", { maxMessages: 16, waitMs: 20 });
      for (const m of got) {
        await b.complete("q", m.seqNumber, m.lockToken!);
        completed++;
      }
    }
  });
  await new Promise((r) => setTimeout(r, WARMUP_MS));
  completed = 0;
  const start = performance.now();
  await new Promise((r) => setTimeout(r, DURATION_MS));
  const rate = (completed * 1000) / (performance.now() - start);
  stop = true;
  await Promise.all([...producers, ...consumers]);
  await b.close();
  return rate;
}

interface Drain {
  enqueue: number;
  drain: number;
  total: number;
}

/** Enqueues `JOBS` jobs from 4 concurrent enqueuers (one job per call), then drains them with 4 workers. */
async function jobs(enqueue: () => Promise<void>, drain: () => Promise<void>): Promise<Drain> {
  let left = JOBS;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (left > 0) {
        left--;
        await enqueue();
      }
    }),
  );
  const t1 = performance.now();
  await drain();
  const t2 = performance.now();
  return {
    enqueue: (JOBS * 1000) / (t1 - t0),
    drain: (JOBS * 1000) / (t2 - t1),
    total: (t2 - t0) / 1000,
  };
}

async function mqliteJobs(): Promise<Drain> {
  const b = await open("postgres");
  await b.createQueue("jobs", { lockDurationMs: 60_000 });
  let done = 0;
  const r = await jobs(
    async () => {
      await b.send("jobs", { body: "{}", subject: "noop" });
    },
    async () => {
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (done < JOBS) {
            const got = await b.receive("jobs", { maxMessages: 16, waitMs: 100 });
            if (got.length === 0) continue;
            await b.completeBatch(
              "jobs",
              got.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken! })),
            );
            done += got.length;
          }
        }),
      );
    },
  );
  await b.close();
  return r;
}

async function pgBossJobs(): Promise<Drain> {
  const boss = new PgBoss({ connectionString: DSN, schema: SCHEMAS.pgboss, max: 10, supervise: false });
  boss.on("error", () => {});
  await boss.start();
  await boss.createQueue("jobs");
  let done = 0;
  const r = await jobs(
    async () => {
      await boss.send("jobs", {});
    },
    async () => {
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (done < JOBS) {
            const got = await boss.fetch("jobs", { batchSize: 16 });
            if (!got || got.length === 0) {
              await new Promise((res) => setTimeout(res, 20));
              continue;
            }
            await boss.complete(
              "jobs",
              got.map((j) => j.id),
            );
            done += got.length;
          }
        }),
      );
    },
  );
  await boss.stop({ graceful: false, wait: true });
  return r;
}

async function graphileJobs(): Promise<Drain> {
  const utils = await makeWorkerUtils({ connectionString: DSN, schema: SCHEMAS.graphile });
  await utils.migrate();
  const r = await jobs(
    async () => {
      await utils.addJob("noop", {});
    },
    async () => {
      let done = 0;
      let finish!: () => void;
      const finished = new Promise<void>((res) => {
        finish = res;
      });
      const runner = await graphileRun({
        connectionString: DSN,
        schema: SCHEMAS.graphile,
        concurrency: 4,
        noHandleSignals: true,
        pollInterval: 100,
        logger: new (await import("graphile-worker")).Logger(() => () => {}),
        taskList: {
          noop: async () => {
            if (++done === JOBS) finish();
          },
        },
      });
      await finished;
      await runner.stop();
    },
  );
  await utils.release();
  return r;
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

async function main(): Promise<void> {
  await dropSchemas();
  try {
    console.log(
      `\n### mqlite on PostgreSQL beside mqlite on SQLite (sync=normal), ${DURATION_MS} ms each after ${WARMUP_MS} ms warm-up\n`,
    );
    console.log(
      "| scenario | PostgreSQL | PostgreSQL, synchronous_commit=off | SQLite | ratio (PG / SQLite) |",
    );
    console.log("|---|--:|--:|--:|--:|");
    for (const [name, fn] of [
      ["send 1/call, 4 producers", (e: Engine) => sendRate(e, 1)],
      ["send 64/call, 4 producers", (e: Engine) => sendRate(e, 64)],
      ["end-to-end 4 producers × 4 consumers (receive+complete)", endToEnd],
    ] as const) {
      const p = await fn("postgres");
      const a = await fn("postgres-async");
      const s = await fn("sqlite");
      console.log(
        `| ${name} | ${fmt(p)} msg/s | ${fmt(a)} msg/s | ${fmt(s)} msg/s | ${(p / s).toFixed(2)}× / ${(a / s).toFixed(2)}× |`,
      );
    }

    console.log(
      `\n### Enqueue + drain ${JOBS.toLocaleString("en-US")} no-op jobs on one PostgreSQL server\n`,
    );
    console.log("| system | enqueue (4 × 1/call) | drain (4 workers) | total |");
    console.log("|---|--:|--:|--:|");
    const results: [string, Drain][] = [
      ["mqlite (PostgreSQL engine)", await mqliteJobs()],
      ["pg-boss 10", await pgBossJobs()],
      ["graphile-worker 0.17", await graphileJobs()],
    ];
    for (const [name, r] of results) {
      console.log(
        `| ${name} | ${fmt(r.enqueue)} jobs/s | ${fmt(r.drain)} jobs/s | ${r.total.toFixed(2)} s |`,
      );
    }
  } finally {
    await dropSchemas();
  }
}

await main();
