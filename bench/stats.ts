// Stats at 1,000,000 messages and what keeping its counts costs. Stats reads per-queue counts kept
// in the writing transactions (schema 9; inserts counted by their statements since schema 12, claims
// since 13, other moves and deletes by triggers): measured beside the full read it replaced (a count by state and the
// oldest message, over every row of the queue), in the same rounds. The counting's write cost: send
// 1/call, send batch 64 and end-to-end send→receive→complete on a fresh file with the counting
// beside the same without it (triggers dropped, insert counting off), rounds interleaved.
// Env: BENCH_STATS_BACKLOG (default 1000000), BENCH_MS.
import type Database from "better-sqlite3";
import type { Broker } from "../src/contract/broker.js";
import { silentLogger } from "../src/contract/logger.js";
import { SqliteBroker } from "../src/store/sqlite/sqlite-broker.js";
import { mainIfEntry, median, PAYLOAD_256, Recorder, type SuiteResult, scratch } from "./_lib.js";
import { endToEnd, FULL_READ_STATS, sendRate } from "./_scenarios.js";

const BACKLOG = Number(process.env.BENCH_STATS_BACKLOG ?? 1_000_000);
const MS = Number(process.env.BENCH_MS ?? 1500);
const COUNT_TRIGGERS = ["queue_counts_delete", "queue_counts_update"];

const dbOf = (b: Broker) => (b as unknown as { db: Database.Database }).db;

/** Median of `n` timed calls of `f`, ms. */
async function timedMedian(n: number, f: () => unknown): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await f();
    samples.push(performance.now() - t);
  }
  return median(samples);
}

const dir = scratch("stats");
let files = 0;

/** The broker's counter (the one its send, redrive and claim statements share). */
const counterOf = (b: Broker) =>
  (
    b as unknown as {
      maintenanceOps: { counts: { inserted: (...a: unknown[]) => void; moved: (...a: unknown[]) => void } };
    }
  ).maintenanceOps.counts;

/** A broker on a fresh file; without counting (triggers and inserts) when `counted` is false. */
async function freshBroker(counted: boolean): Promise<Broker> {
  const b = new SqliteBroker(dir.file(`mq-${++files}.db`), { logger: silentLogger });
  if (!counted) {
    for (const t of COUNT_TRIGGERS) dbOf(b).exec(`DROP TRIGGER ${t}`);
    counterOf(b).inserted = () => {};
    counterOf(b).moved = () => {};
  }
  await b.createQueue("q", { lockDurationMs: 60_000, maxDeliveryCount: 1000 });
  return b;
}

export async function run(): Promise<SuiteResult> {
  const rec = new Recorder("Stats and its kept counts");
  const n = BACKLOG.toLocaleString("en-US");

  const b = new SqliteBroker(dir.file("backlog.db"), { logger: silentLogger });
  try {
    await b.createQueue("q");
    const chunk = Array.from({ length: 1000 }, () => ({ body: PAYLOAD_256 }));
    for (let sent = 0; sent < BACKLOG; sent += 1000)
      await b.send("q", sent + 1000 <= BACKLOG ? chunk : chunk.slice(0, BACKLOG - sent));
    const fullRead = dbOf(b).prepare(FULL_READ_STATS);
    const group = `Stats at ${n} messages`;
    await rec.compare({ group, scenario: `Stats at ${n}`, unit: "ms", better: "lower" }, [
      {
        system: "mqlite",
        mode: "embedded",
        vs: "the full count it replaced",
        round: () => timedMedian(101, () => b.stats("q")),
      },
      { system: "the full count it replaced", round: () => timedMedian(3, () => fullRead.all("q")) },
    ]);
  } finally {
    await b.close();
  }

  const wg = "Write cost of the kept counts";
  const pair = (scenario: string, unit: string, work: (b: Broker) => Promise<number>) =>
    rec.compare({ group: wg, scenario, unit, better: "higher" }, [
      {
        system: "mqlite",
        mode: "embedded",
        vs: "the same without counting",
        round: async () => {
          const b = await freshBroker(true);
          try {
            return await work(b);
          } finally {
            await b.close();
          }
        },
      },
      {
        system: "the same without counting",
        round: async () => {
          const b = await freshBroker(false);
          try {
            return await work(b);
          } finally {
            await b.close();
          }
        },
      },
    ]);
  await pair("send 1/call, 1 caller", "msg/s", (b) => sendRate(b, "q", 1, 1, MS));
  await pair("send batch 64", "msg/s", (b) => sendRate(b, "q", 1, 64, MS));
  await pair("end-to-end 4×4 send→receive→complete", "msg/s", (b) => endToEnd(b, "q", 4, 4, MS));
  return rec.result;
}

await mainIfEntry(import.meta.url, run);
