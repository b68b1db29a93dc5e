// The PostgreSQL peers on one server (127.0.0.1:5432, skipped when it does not answer): pg-boss 10
// and graphile-worker 0.17 beside mqlite's job face on its PostgreSQL engine — enqueue one job per
// call, enqueue in batches of 64, drain 20,000 no-op jobs at concurrency 1, 4 and 16, and the
// enqueue→handler latency of an idle worker (one job at a time). A round that would outlast
// BENCH_CAP_MS (default 10000) is cut there and counts what it did.
// Env: MQLITE_BENCH_PG (default postgres://postgres@127.0.0.1:5432/postgres), BENCH_JOBS,
// BENCH_PG_LATENCY (jobs per latency round, default 300), BENCH_PG_ONLY (run only the scenarios whose
// name contains one of these comma-separated words).
import { run as graphileRun, Logger, makeWorkerUtils } from "graphile-worker";
import pg from "pg";
import PgBoss from "pg-boss";
import { silentLogger } from "../src/contract/logger.js";
import { Queue } from "../src/jobs/index.js";
import { openBroker } from "../src/open.js";
import {
  type Contender,
  JOB_ARG,
  JOBS,
  mainIfEntry,
  median,
  PG_DSN,
  percentile,
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
const LATENCY = Number(process.env.BENCH_PG_LATENCY ?? 300);
const LATENCY_WARMUP = 50;
const ONLY = process.env.BENCH_PG_ONLY?.split(",").filter(Boolean);
const wanted = (scenario: string) => !ONLY || ONLY.some((w) => scenario.includes(w));

/**
 * p50 and p99 from the enqueue call to the handler's start, one job at a time with the worker idle
 * and waiting (1 ms apart): `enqueue` adds a job; `handled` is set to resolve when the handler starts.
 */
async function latency(
  enqueue: () => Promise<unknown>,
  handler: { started: (at: number) => void },
): Promise<{ p50: number; p99: number }> {
  const samples: number[] = [];
  for (let i = 0; i < LATENCY + LATENCY_WARMUP; i++) {
    const started = new Promise<number>((r) => {
      handler.started = r;
    });
    const t = performance.now();
    await enqueue();
    const at = await started;
    if (i >= LATENCY_WARMUP) samples.push(at - t);
    await new Promise((r) => setTimeout(r, 1));
  }
  return { p50: median(samples), p99: percentile(samples, 99) };
}

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
  const compare = async (spec: Parameters<Recorder["compare"]>[0], contenders: Contender[]) => {
    if (wanted(spec.scenario)) await rec.compare(spec, contenders);
  };
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
    await compare({ ...jg, scenario: "enqueue 1/call" }, [
      ours((q) => enqueueOne(q, Math.min(JOBS, 5000))),
      boss((b) => capped(JOBS, 1, () => b.send("noop", payload))),
      graphile((u) => capped(JOBS, 1, () => u.addJob("noop", payload))),
    ]);
    await compare({ ...jg, scenario: "enqueue batch 64" }, [
      ours((q) => enqueueBatch(q, JOBS, 64)),
      boss((b) => capped(JOBS, 64, () => b.insert(b64.map((data) => ({ name: "noop", data }))))),
      graphile((u) =>
        capped(JOBS, 64, () => u.addJobs(b64.map((data) => ({ identifier: "noop", payload: data })))),
      ),
    ]);
    for (const c of DRAIN_CONCURRENCY) {
      await compare({ ...jg, scenario: `drain ${JOBS.toLocaleString("en-US")}, concurrency ${c}` }, [
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
    // Enqueue→handler latency: the p50 is compared round by round, each round's p99 is kept beside it.
    const p99s = new Map<string, number[]>();
    const keepP99 = (system: string, l: { p50: number; p99: number }) => {
      p99s.set(system, [...(p99s.get(system) ?? []), l.p99]);
      return l.p50;
    };
    const lg = { group: "Latency, PostgreSQL", unit: "ms", better: "lower" as const };
    const latencyScenario = (key: string) => `enqueue→handler ${key} (${LATENCY} jobs, one at a time)`;
    await compare({ ...lg, scenario: latencyScenario("p50") }, [
      {
        system: "mqlite (PostgreSQL engine)",
        vs: "graphile-worker 0.17",
        round: async () => {
          await drop(SCHEMAS.mqlite);
          const handler = { started: (_at: number) => {} };
          const q = new Queue({ dsn: PG_DSN, schema: SCHEMAS.mqlite }).task("ping", () =>
            handler.started(performance.now()),
          );
          const w = q.runWorker({ concurrency: 1 });
          try {
            return keepP99("mqlite (PostgreSQL engine)", await latency(() => q.enqueue("ping", []), handler));
          } finally {
            await w.stop();
            await q.close();
          }
        },
      },
      {
        ...graphile(async (u) => {
          const handler = { started: (_at: number) => {} };
          const runner = await graphileRun({
            connectionString: PG_DSN,
            schema: SCHEMAS.graphile,
            concurrency: 1,
            noHandleSignals: true,
            pollInterval: 2000,
            logger: new Logger(() => () => {}),
            taskList: {
              ping: async () => {
                handler.started(performance.now());
              },
            },
          });
          try {
            return keepP99("graphile-worker 0.17", await latency(() => u.addJob("ping", {}), handler));
          } finally {
            await runner.stop();
          }
        }),
        vs: undefined,
      },
    ]);
    for (const [system, rounds] of p99s) {
      rec.add({ ...lg, scenario: latencyScenario("p99"), system, value: median(rounds), rounds });
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
      await compare(
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
