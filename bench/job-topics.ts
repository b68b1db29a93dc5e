// Job topics: publishing to a topic with 20 fan-out (task) subscribers versus one with 20 log
// subscribers, in one run: rows written per publish (messages + topic-log rows, counted in the file)
// and publishes per second (the engine's publish from 1 and from 16 concurrent callers, and the job
// face's queue.publish, which also reads back the jobs it made). Env: BENCH_MS (per round, default
// 1500), BENCH_ROUNDS, BENCH_SUBSCRIBERS (default 20).
import Database from "better-sqlite3";
import { silentLogger } from "../src/contract/logger.js";
import { Queue } from "../src/jobs/index.js";
import { SqliteBroker } from "../src/store/sqlite/sqlite-broker.js";
import { rate, scratch } from "./_lib.js";

const MS = Number(process.env.BENCH_MS ?? 1500);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 20);
/** A job argument that serializes to about 256 bytes of JSON. */
const JOB_ARG = "x".repeat(248);
const BODY = Buffer.from(JSON.stringify([JOB_ARG]));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(1));

/** `callers` concurrent loops publishing for `ms`; publishes per second. */
async function concurrentRate(callers: number, ms: number, step: () => Promise<void>): Promise<number> {
  let stop = false;
  let n = 0;
  const start = performance.now();
  const loops = Array.from({ length: callers }, async () => {
    while (!stop) {
      await step();
      n++;
    }
  });
  await new Promise((r) => setTimeout(r, ms));
  stop = true;
  const elapsed = performance.now() - start;
  await Promise.all(loops);
  return (n * 1000) / elapsed;
}

type Kind = "fan-out" | "log";

/** A broker on a fresh file whose topic "t" has SUBSCRIBERS subscribers of one kind. */
async function topicBroker(file: string, kind: Kind): Promise<SqliteBroker> {
  const b = new SqliteBroker(file, { logger: silentLogger });
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const name = `s${String(i).padStart(2, "0")}`;
    if (kind === "log") await b.subscribeLog("t", name);
    else await b.subscribeTask("t", name, { task: `task-${name}`, queue: "jobs" });
  }
  return b;
}

/** Rows in the tables a publish writes to. */
function rowsIn(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    const r = db
      .prepare("SELECT (SELECT count(*) FROM messages) + (SELECT count(*) FROM topic_messages) AS n")
      .get() as {
      n: number;
    };
    return r.n;
  } finally {
    db.close();
  }
}

interface Row {
  scenario: string;
  fanOut: number[];
  log: number[];
}

/** Runs each scenario's rounds interleaved (fan-out, log, fan-out, log, …) so that noise hurts both alike. */
async function main(): Promise<void> {
  const tmp = scratch("job-topics");
  const rows: Row[] = [];

  // Rows written per publish, counted in the file.
  const perPublish: Record<Kind, number> = { "fan-out": 0, log: 0 };
  for (const kind of ["fan-out", "log"] as Kind[]) {
    const file = tmp.file(`rows-${kind}.db`);
    const b = await topicBroker(file, kind);
    const before = rowsIn(file);
    const n = 200;
    for (let i = 0; i < n; i++) await b.publish("t", { body: BODY });
    await b.close();
    perPublish[kind] = (rowsIn(file) - before) / n;
  }

  const brokers: Record<Kind, SqliteBroker> = {
    "fan-out": await topicBroker(tmp.file("rate-fan-out.db"), "fan-out"),
    log: await topicBroker(tmp.file("rate-log.db"), "log"),
  };
  const queues: Record<Kind, Queue> = {
    "fan-out": new Queue({ broker: brokers["fan-out"] }),
    log: new Queue({ broker: brokers.log }),
  };
  const scenarios: [string, (k: Kind) => Promise<number>][] = [
    [
      "engine publish, 1 caller",
      (k) =>
        rate(MS, async () => {
          await brokers[k].publish("t", { body: BODY });
          return 1;
        }),
    ],
    [
      "engine publish, 16 callers",
      (k) => concurrentRate(16, MS, async () => void (await brokers[k].publish("t", { body: BODY }))),
    ],
    [
      "queue.publish (returns the jobs), 1 caller",
      (k) =>
        rate(MS, async () => {
          await queues[k].publish("t", [JOB_ARG]);
          return 1;
        }),
    ],
  ];
  for (const [scenario, fn] of scenarios) {
    const row: Row = { scenario, fanOut: [], log: [] };
    for (let r = 0; r < ROUNDS; r++) {
      row.fanOut.push(await fn("fan-out"));
      row.log.push(await fn("log"));
    }
    rows.push(row);
    console.error(
      `  ${scenario}: fan-out ${row.fanOut.map(fmt).join(", ")}; log ${row.log.map(fmt).join(", ")}`,
    );
  }
  for (const k of ["fan-out", "log"] as Kind[]) {
    await queues[k].close();
    await brokers[k].close();
  }

  console.log(`\n## Job topics: ${SUBSCRIBERS} fan-out subscribers vs ${SUBSCRIBERS} log subscribers\n`);
  console.log("| measure | fan-out topic | log topic | fan-out / log |");
  console.log("|---|--:|--:|--:|");
  console.log(
    `| rows written per publish | ${perPublish["fan-out"]} | ${perPublish.log} | ${(perPublish["fan-out"] / perPublish.log).toFixed(1)}× |`,
  );
  for (const r of rows) {
    const f = median(r.fanOut);
    const l = median(r.log);
    console.log(
      `| ${r.scenario}, publish/s (median of ${ROUNDS}) | ${fmt(f)} | ${fmt(l)} | ${(f / l).toFixed(2)}× |`,
    );
  }
  console.log(
    `\nA fan-out publish stores one job per subscriber (${SUBSCRIBERS} rows); a log publish stores one row whatever the number of readers.`,
  );
  tmp.cleanup();
}

await main();
