// The PostgreSQL peers on one server (127.0.0.1:5432, skipped when it does not answer): pg-boss 10
// and graphile-worker 0.17 beside mqlite's job face on its PostgreSQL engine — enqueue one job per
// call, enqueue in batches of 64, drain 20,000 no-op jobs at concurrency 1, 4 and 16. A round that
// would outlast BENCH_CAP_MS (default 10000) is cut there and counts what it did.
// Env: MQLITE_BENCH_PG (default postgres://postgres@127.0.0.1:5432/postgres), BENCH_JOBS.
import { run as graphileRun, Logger, makeWorkerUtils } from "graphile-worker";
import pg from "pg";
import PgBoss from "pg-boss";
import { silentLogger } from "../src/contract/logger.js";
import { openBroker } from "../src/open.js";
import {
  type Contender,
  JOB_ARG,
  JOBS,
  mainIfEntry,
  PG_DSN,
  Recorder,
  type SuiteResult,
  scratch,
  tcpAnswers,
} from "./_lib.js";
import {
  DRAIN_CONCURRENCY,
  drain,
  endToEnd,
  enqueueBatch,
  enqueueOne,
  JOB_GROUP,
  noopQueue,
} from "./_scenarios.js";

const CAP_MS = Number(process.env.BENCH_CAP_MS ?? 10_000);
const SCHEMAS = {
  mqlite: "bench_mqlite",
  broker: "bench_mqlite_broker",
  pgboss: "bench_pgboss",
  graphile: "bench_graphile",
};
const E2E_MS = Number(process.env.BENCH_MS ?? 1500);
const payload = { p: JOB_ARG };

async function sql(text: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_DSN });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}
const drop = (schema: string) => sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);

async function capped(n: number, per: number, step: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  let done = 0;
  while (done < n && performance.now() - t < CAP_MS) {
    await step();
    done += per;
  }
  return (done * 1000) / (performance.now() - t);
}

async function until(n: number, count: () => number, t: number): Promise<number> {
  while (count() < n && performance.now() - t < CAP_MS) await new Promise((r) => setTimeout(r, 5));
  return (count() * 1000) / (performance.now() - t);
}

export async function run(): Promise<SuiteResult> {
  const rec = new Recorder("PostgreSQL peers");
  if (!(await tcpAnswers(5432))) {
    for (const s of ["pg-boss 10", "graphile-worker 0.17", "mqlite (PostgreSQL engine)"])
      rec.skip(s, "PostgreSQL on 127.0.0.1:5432 does not answer");
    return rec.result;
  }
  const boss = (round: (b: PgBoss) => Promise<number>): Contender => ({
    system: "pg-boss 10",
    vs: "raw better-sqlite3 (normal)",
    round: async () => {
      await drop(SCHEMAS.pgboss);
      const b = new PgBoss({ connectionString: PG_DSN, schema: SCHEMAS.pgboss, max: 10, supervise: false });
      b.on("error", () => {});
      await b.start();
      await b.createQueue("noop");
      try {
        return await round(b);
      } finally {
        await b.stop({ graceful: false, wait: true });
      }
    },
  });
  const graphile = (
    round: (u: Awaited<ReturnType<typeof makeWorkerUtils>>) => Promise<number>,
  ): Contender => ({
    system: "graphile-worker 0.17",
    vs: "raw better-sqlite3 (normal)",
    round: async () => {
      await drop(SCHEMAS.graphile);
      const u = await makeWorkerUtils({ connectionString: PG_DSN, schema: SCHEMAS.graphile });
      await u.migrate();
      try {
        return await round(u);
      } finally {
        await u.release();
      }
    },
  });
  const ours = (round: (q: ReturnType<typeof noopQueue>) => Promise<number>): Contender => ({
    system: "mqlite (PostgreSQL engine)",
    vs: "raw better-sqlite3 (normal)",
    round: async () => {
      await drop(SCHEMAS.mqlite);
      const q = noopQueue({ dsn: PG_DSN, schema: SCHEMAS.mqlite });
      try {
        return await round(q);
      } finally {
        await q.close();
      }
    },
  });
  const jg = { group: JOB_GROUP, unit: "jobs/s", better: "higher" as const };
  const b64 = Array.from({ length: 64 }, () => payload);
  try {
    await rec.compare({ ...jg, scenario: "enqueue 1/call" }, [
      ours((q) => enqueueOne(q, Math.min(JOBS, 5000))),
      boss((b) => capped(JOBS, 1, () => b.send("noop", payload))),
      graphile((u) => capped(JOBS, 1, () => u.addJob("noop", payload))),
    ]);
    await rec.compare({ ...jg, scenario: "enqueue batch 64" }, [
      ours((q) => enqueueBatch(q, JOBS, 64)),
      boss((b) => capped(JOBS, 64, () => b.insert(b64.map((data) => ({ name: "noop", data }))))),
      graphile((u) =>
        capped(JOBS, 64, () => u.addJobs(b64.map((data) => ({ identifier: "noop", payload: data })))),
      ),
    ]);
    for (const c of DRAIN_CONCURRENCY) {
      await rec.compare({ ...jg, scenario: `drain ${JOBS.toLocaleString("en-US")}, concurrency ${c}` }, [
        ours((q) => drain(q, c)),
        boss(async (b) => {
          for (let i = 0; i < JOBS; i += 1000)
            await b.insert(Array.from({ length: 1000 }, () => ({ name: "noop", data: payload })));
          let done = 0;
          const t = performance.now();
          // pg-boss 10: concurrency is one `work` loop per slot, each fetching up to 16 jobs a poll.
          for (let i = 0; i < c; i++) {
            await b.work("noop", { batchSize: 16, pollingIntervalSeconds: 0.5 }, async (jobs) => {
              done += jobs.length;
            });
          }
          const r = await until(JOBS, () => done, t);
          await b.offWork("noop");
          return r;
        }),
        graphile(async (u) => {
          for (let i = 0; i < JOBS; i += 1000)
            await u.addJobs(Array.from({ length: 1000 }, () => ({ identifier: "noop", payload })));
          let done = 0;
          const t = performance.now();
          const runner = await graphileRun({
            connectionString: PG_DSN,
            schema: SCHEMAS.graphile,
            concurrency: c,
            noHandleSignals: true,
            pollInterval: 100,
            logger: new Logger(() => () => {}),
            taskList: {
              noop: async () => {
                done++;
              },
            },
          });
          const r = await until(JOBS, () => done, t);
          await runner.stop();
          return r;
        }),
      ]);
    }
    // The broker face end to end on each engine: 4 producers, 4 consumers (receive + complete).
    for (const [p, c] of [
      [4, 4],
      [16, 16],
    ] as const) {
      const engine = (system: string, location: () => Promise<string>): Contender => ({
        system,
        vs: "mqlite (SQLite engine)",
        round: async () => {
          const b = await openBroker(await location(), { logger: silentLogger });
          try {
            await b.createQueue("e2e", { lockDurationMs: 60_000, maxDeliveryCount: 1000 });
            return await endToEnd(b, "e2e", p, c, E2E_MS);
          } finally {
            await b.close();
          }
        },
      });
      const tmp = scratch("postgres-e2e");
      let n = 0;
      await rec.compare(
        {
          group: "Broker end to end: PostgreSQL engine vs SQLite engine",
          unit: "msg/s",
          better: "higher",
          scenario: `end-to-end ${p}×${c} send→receive→complete`,
        },
        [
          engine("mqlite (PostgreSQL engine)", async () => {
            await drop(SCHEMAS.broker);
            return `${PG_DSN}${PG_DSN.includes("?") ? "&" : "?"}schema=${SCHEMAS.broker}`;
          }),
          { ...engine("mqlite (SQLite engine)", async () => tmp.file(`e2e-${n++}.db`)), vs: undefined },
        ],
      );
      tmp.cleanup();
    }
  } finally {
    for (const s of Object.values(SCHEMAS)) await drop(s).catch(() => {});
  }
  return rec.result;
}

await mainIfEntry(import.meta.url, run);
