// Free pages and the event loop. After deletes, a file holds free pages; the broker gives them back
// to the file system (incremental auto-vacuum) once a minute, in steps with the event loop turning
// between them: its longest turn is measured beside one `incremental_vacuum` over all of them in one
// call, as the broker's pass made it before (then between two TRUNCATE checkpoints). Then what free pages cost a long write: a
// send of 10,000 × 2.4 KiB bodies onto a file with 20,000 free pages (its commit rewrites the
// pointer-map pages it changed after their spill) beside the same send after they were given back.
// Figures: the longest turn of the event loop, ms (a probe rescheduled with setImmediate).
// Env: BENCH_RECLAIM_PAGES (default 20000).
import type Database from "better-sqlite3";
import { silentLogger } from "../src/contract/logger.js";
import { SqliteBroker } from "../src/store/sqlite/sqlite-broker.js";
import { mainIfEntry, Recorder, type SuiteResult, scratch } from "./_lib.js";

const FREE_PAGES = Number(process.env.BENCH_RECLAIM_PAGES ?? 20_000);
const LONG_SEND = 10_000;

const dir = scratch("reclaim");
let files = 0;
const dbOf = (b: SqliteBroker) => (b as unknown as { db: Database.Database }).db;
const reclaimerOf = (b: SqliteBroker) =>
  (b as unknown as { reclaimer: { reclaim(): Promise<void> } }).reclaimer;

/** A broker on a fresh file holding about `FREE_PAGES` free pages (page-sized messages, deleted). */
async function withFreePages(): Promise<SqliteBroker> {
  const b = new SqliteBroker(dir.file(`mq-${++files}.db`), { logger: silentLogger, background: false });
  await b.createQueue("filler");
  const body = Buffer.alloc(3000, 1);
  for (let sent = 0; sent < FREE_PAGES; sent += 1000)
    await b.send(
      "filler",
      Array.from({ length: 1000 }, () => ({ body })),
    );
  await b.deleteQueue("filler");
  await b.createQueue("q");
  return b;
}

/** Runs `work` and returns the longest turn of the event loop while it ran, ms. */
async function longestTurn(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  let running = true;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  running = false;
  return Math.max(longest, performance.now() - last);
}

/** One round of `measure` on a broker set up by `prepare`, closed after. */
async function onFresh(
  prepare: (b: SqliteBroker) => Promise<void>,
  measure: (b: SqliteBroker) => Promise<number>,
) {
  const b = await withFreePages();
  try {
    await prepare(b);
    return await measure(b);
  } finally {
    await b.close();
  }
}

export async function run(): Promise<SuiteResult> {
  const rec = new Recorder("Free pages and the event loop");
  const pages = FREE_PAGES.toLocaleString("en-US");
  const group = "Free pages and the event loop (longest turn)";
  const none = async () => {};

  await rec.compare({ group, scenario: `give back ${pages} free pages`, unit: "ms", better: "lower" }, [
    {
      system: "mqlite, in steps of 256 pages",
      mode: "embedded",
      vs: "one incremental_vacuum",
      round: () => onFresh(none, (b) => longestTurn(() => reclaimerOf(b).reclaim())),
    },
    {
      system: "one incremental_vacuum",
      round: () =>
        onFresh(none, (b) =>
          longestTurn(async () => {
            dbOf(b).pragma("incremental_vacuum");
          }),
        ),
    },
  ]);

  const body = Buffer.alloc(2400, 7);
  const longSend = (b: SqliteBroker) =>
    longestTurn(() =>
      b.send(
        "q",
        Array.from({ length: LONG_SEND }, () => ({ body })),
      ),
    );
  await rec.compare(
    {
      group,
      scenario: `send ${LONG_SEND.toLocaleString("en-US")} × 2.4 KiB bodies`,
      unit: "ms",
      better: "lower",
    },
    [
      {
        system: `mqlite, free pages given back first`,
        mode: "embedded",
        vs: `onto ${pages} free pages`,
        round: () => onFresh((b) => reclaimerOf(b).reclaim(), longSend),
      },
      { system: `onto ${pages} free pages`, round: () => onFresh(none, longSend) },
    ],
  );
  return rec.result;
}

await mainIfEntry(import.meta.url, run);
