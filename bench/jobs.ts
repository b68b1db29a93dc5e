// The job face beside its peers, in one run: enqueue one job per call, enqueue in batches of 64,
// and drain 20,000 no-op jobs at worker concurrency 1, 4 and 16 — mqlite's Queue (embedded), raw
// better-sqlite3 (the floor: one-row claim + delete), plainjob and liteque (SQLite), BullMQ and
// bee-queue (Redis on 127.0.0.1:6379, skipped when it does not answer); and the in-process
// enqueue→handler latency. pg-boss and graphile-worker are in postgres.ts.
// Also enqueue in batches of 64 sustained over ten times as many jobs, mqlite beside raw only. The
// enqueue scenarios' rounds last a fraction of a second: each system runs one unmeasured round first.
// Env: BENCH_JOBS (default 20000), BENCH_CAP_MS (longest a peer's round may take, default 10000).
import BeeQueue from "bee-queue";
import Database from "better-sqlite3";
import { Queue as BullQueue, Worker as BullWorker } from "bullmq";
import { buildDBClient, Runner, SqliteQueue } from "liteque";
import { better, defineQueue, defineWorker } from "plainjob";
import { Queue } from "../src/jobs/index.js";
import {
  type Contender,
  JOB_ARG,
  JOBS,
  mainIfEntry,
  median,
  percentile,
  Recorder,
  ROUNDS,
  redisAnswers,
  type SuiteResult,
  scratch,
} from "./_lib.js";
import {
  DRAIN_CONCURRENCY,
  drain,
  enqueueBatch,
  enqueueOne,
  JOB_GROUP,
  JOB_QUEUE,
  noopQueue,
  rawDb,
  rawDrain,
  rawEnqueue,
} from "./_scenarios.js";

const CAP_MS = Number(process.env.BENCH_CAP_MS ?? 10_000);
/** Jobs per round of the sustained enqueue (ten times a normal round). */
const SUSTAINED = JOBS * 10;
const LATENCY = Number(process.env.BENCH_LATENCY ?? 2000);
const silent = { error() {}, warn() {}, info() {}, debug() {} };
const payload = { p: JOB_ARG };

/** Loops `step` `n` times or until the cap; per second. */
async function capped(n: number, per: number, step: (i: number) => Promise<unknown> | unknown) {
  const t = performance.now();
  let done = 0;
  while (done < n && performance.now() - t < CAP_MS) {
    await step(done);
    done += per;
  }
  return (done * 1000) / (performance.now() - t);
}

/** Waits until `count()` reaches n or the cap passes; per second since `t`. */
async function until(n: number, count: () => number, t: number): Promise<number> {
  while (count() < n && performance.now() - t < CAP_MS) await new Promise((r) => setTimeout(r, 2));
  return (count() * 1000) / (performance.now() - t);
}

export async function run(): Promise<SuiteResult> {
  const rec = new Recorder("Job queue: mqlite vs peers");
  const tmp = scratch("jobs");
  let fileNo = 0;
  const file = (name: string) => tmp.file(`${name}-${fileNo++}.db`);
  const redis = await redisAnswers();
  if (!redis) {
    for (const s of ["BullMQ", "bee-queue"]) rec.skip(s, "Redis on 127.0.0.1:6379 does not answer");
  }

  // --- contenders per system -------------------------------------------------------------------
  const ours = (round: (q: ReturnType<typeof noopQueue>) => Promise<number>): Contender => ({
    system: "mqlite",
    mode: "embedded",
    vs: "raw better-sqlite3 (normal)",
    round: async () => {
      const q = noopQueue({ dbPath: file("mqlite") });
      try {
        return await round(q);
      } finally {
        await q.close();
      }
    },
  });
  const rawC = (round: (r: ReturnType<typeof rawDb>) => number): Contender => ({
    system: "raw better-sqlite3 (normal)",
    round: () => {
      // Rows of the queue the job face writes to (see JOB_QUEUE), so both store the same name.
      const r = rawDb(file("raw"), "normal", JOB_QUEUE);
      try {
        return round(r);
      } finally {
        r.close();
      }
    },
  });

  const plain = (round: (q: ReturnType<typeof defineQueue>) => Promise<number> | number): Contender => ({
    system: "plainjob",
    vs: "raw better-sqlite3 (normal)",
    round: async () => {
      const q = defineQueue({
        connection: better(new Database(file("plainjob"))),
        logger: silent,
        maintenanceInterval: 3_600_000,
      });
      try {
        return await round(q);
      } finally {
        q.close();
      }
    },
  });

  const lite = (round: (q: SqliteQueue<typeof payload>) => Promise<number>): Contender => ({
    system: "liteque",
    vs: "raw better-sqlite3 (normal)",
    round: async () => {
      const q = new SqliteQueue<typeof payload>(
        "noop",
        buildDBClient(file("liteque"), { runMigrations: true }),
        { defaultJobArgs: { numRetries: 0 }, keepFailedJobs: false },
      );
      return round(q);
    },
  });

  let bullNo = 0;
  const bullConn = { host: "127.0.0.1", port: 6379 };
  const bull = (round: (q: BullQueue) => Promise<number>): Contender => ({
    system: "BullMQ",
    vs: "raw better-sqlite3 (normal)",
    round: async () => {
      const q = new BullQueue(`mqlite-bench-${process.pid}-${bullNo++}`, { connection: bullConn });
      await q.waitUntilReady();
      try {
        return await round(q);
      } finally {
        await q.obliterate({ force: true });
        await q.close();
      }
    },
  });
  const bullJob = { name: "noop", data: payload, opts: { removeOnComplete: true, removeOnFail: true } };

  let beeNo = 0;
  const bee = (round: (q: BeeQueue) => Promise<number>): Contender => ({
    system: "bee-queue",
    vs: "raw better-sqlite3 (normal)",
    round: async () => {
      const q = new BeeQueue(`mqlite-bench-${process.pid}-${beeNo++}`, {
        redis: bullConn,
        removeOnSuccess: true,
        removeOnFailure: true,
        sendEvents: false,
        storeJobs: false,
      });
      await q.ready();
      try {
        return await round(q);
      } finally {
        await q.destroy();
        await q.close();
      }
    },
  });

  const redisOnly = (cs: Contender[]) =>
    cs.filter((c) => redis || !["BullMQ", "bee-queue"].includes(c.system));
  const jobsPerSec = { group: JOB_GROUP, unit: "jobs/s", better: "higher" as const };

  // --- enqueue one per call -----------------------------------------------------------------------
  await rec.compare(
    { ...jobsPerSec, scenario: "enqueue 1/call", warmup: true },
    redisOnly([
      ours((q) => enqueueOne(q, JOBS)),
      rawC((r) => rawEnqueue(r, 1)),
      plain((q) => capped(JOBS, 1, () => q.add("noop", payload))),
      lite((q) => capped(JOBS, 1, () => q.enqueue(payload))),
      bull((q) => capped(JOBS, 1, () => q.add(bullJob.name, bullJob.data, bullJob.opts))),
      bee((q) => capped(JOBS, 1, () => q.createJob(payload).save())),
    ]),
  );

  // --- enqueue in batches of 64 -------------------------------------------------------------------
  const b64 = Array.from({ length: 64 }, () => payload);
  await rec.compare(
    { ...jobsPerSec, scenario: "enqueue batch 64", warmup: true },
    redisOnly([
      ours((q) => enqueueBatch(q, JOBS, 64)),
      rawC((r) => rawEnqueue(r, 64)),
      plain((q) => capped(JOBS, 64, () => q.addMany("noop", b64))),
      {
        ...lite((q) => capped(JOBS, 64, () => Promise.all(b64.map((p) => q.enqueue(p))))),
        note: "no batch call: 64 concurrent enqueues",
      },
      bull((q) => capped(JOBS, 64, () => q.addBulk(b64.map(() => bullJob)))),
      bee((q) => capped(JOBS, 64, () => q.saveAll(b64.map((p) => q.createJob(p))))),
    ]),
  );

  // Sustained: enough jobs that most of the round writes into a WAL already grown and checkpointed
  // several times (where mqlite's checkpoint thread and raw's inline 1,000-page checkpoint differ).
  await rec.compare(
    { ...jobsPerSec, scenario: `enqueue batch 64, sustained (${SUSTAINED.toLocaleString("en-US")} jobs)` },
    [ours((q) => enqueueBatch(q, SUSTAINED, 64)), rawC((r) => rawEnqueue(r, 64, SUSTAINED))],
  );

  // --- drain ---------------------------------------------------------------------------------------
  for (const c of DRAIN_CONCURRENCY) {
    await rec.compare(
      { ...jobsPerSec, scenario: `drain ${JOBS.toLocaleString("en-US")}, concurrency ${c}` },
      redisOnly([
        ours((q) => drain(q, c)),
        rawC((r) => rawDrain(r)),
        plain(async (q) => {
          for (let i = 0; i < JOBS; i += 1000) q.addMany("noop", Array(1000).fill(payload));
          let done = 0;
          const workers = Array.from({ length: c }, () =>
            defineWorker("noop", () => {}, {
              queue: q,
              logger: silent,
              pollIntervall: 10,
              onCompleted: () => {
                done++;
              },
            }),
          );
          const t = performance.now();
          for (const w of workers) void w.start();
          const r = await until(JOBS, () => done, t);
          await Promise.all(workers.map((w) => w.stop()));
          return r;
        }),
        lite(async (q) => {
          // liteque 0.8.0 claims in an async function inside a better-sqlite3 transaction, which
          // better-sqlite3 refuses: find out before a runner fails outside any await.
          await q.attemptDequeue({ timeoutSecs: 60 }).catch((err: Error) => {
            throw new Error(
              `liteque 0.8.0 claims inside a better-sqlite3 transaction with an async function, which better-sqlite3 refuses (${err.message})`,
            );
          });
          await Promise.all(Array.from({ length: JOBS }, () => q.enqueue(payload)));
          let done = 0;
          const runner = new Runner<typeof payload>(
            q,
            {
              run: async () => {},
              onComplete: async () => {
                done++;
              },
            },
            { concurrency: c, pollIntervalMs: 10, timeoutSecs: 60 },
          );
          const t = performance.now();
          const running = runner.run();
          const r = await until(JOBS, () => done, t);
          runner.stop();
          await running;
          return r;
        }),
        bull(async (q) => {
          for (let i = 0; i < JOBS; i += 1000) await q.addBulk(Array(1000).fill(bullJob));
          let done = 0;
          const t = performance.now();
          const w = new BullWorker(q.name, async () => {}, { connection: bullConn, concurrency: c });
          w.on("completed", () => {
            done++;
          });
          const r = await until(JOBS, () => done, t);
          await w.close();
          return r;
        }),
        bee(async (q) => {
          for (let i = 0; i < JOBS; i += 1000)
            await q.saveAll(Array.from({ length: 1000 }, () => q.createJob(payload)));
          let done = 0;
          q.on("succeeded", () => {
            done++;
          });
          const t = performance.now();
          q.process(c, async () => {});
          return until(JOBS, () => done, t);
        }),
      ]),
    );
  }

  // --- enqueue→handler latency, in-process ---------------------------------------------------------
  // One round first, unmeasured, as the enqueue scenarios have: the hand-off path is compiled by
  // then (the first measured round was 20-40% slower than the next ones).
  await latency(file("latency"));
  const latencies: { p50: number; p99: number }[] = [];
  for (let r = 0; r < ROUNDS; r++) latencies.push(await latency(file("latency")));
  for (const key of ["p50", "p99"] as const) {
    const rounds = latencies.map((l) => l[key]);
    rec.add({
      group: "Latency, in-process",
      scenario: `enqueue→handler ${key} (${LATENCY} jobs, one at a time)`,
      system: "mqlite",
      mode: "embedded",
      value: median(rounds),
      rounds,
      unit: "ms",
      better: "lower",
    });
  }
  return rec.result;
}

/** p50/p99 from enqueue() call to handler start, one job at a time, the worker idle and waiting. */
async function latency(dbPath: string): Promise<{ p50: number; p99: number }> {
  let started: (at: number) => void = () => {};
  const q = new Queue({ dbPath }).task("ping", () => started(performance.now()));
  const w = q.runWorker({ concurrency: 1 });
  const samples: number[] = [];
  for (let i = 0; i < LATENCY + 100; i++) {
    const handled = new Promise<number>((r) => {
      started = r;
    });
    const t = performance.now();
    await q.enqueue("ping", []);
    const at = await handled;
    if (i >= 100) samples.push(at - t);
    await new Promise((r) => setTimeout(r, 1));
  }
  await w.stop();
  await q.close();
  return { p50: median(samples), p99: percentile(samples, 99) };
}

await mainIfEntry(import.meta.url, run);
