// Topic fan-out by subscription count: a topic with 1, 10 and 100 queue subscriptions, half of
// them with a filter the message matches and half with one it does not (1 subscription: it
// matches), published to by one caller; publishes and stored copies per second, beside raw
// better-sqlite3 inserting the same number of rows in one transaction per publish, in the same run.
// Env: BENCH_MS (per round, default 1500), BENCH_ROUNDS.
import { silentLogger } from "../src/contract/logger.js";
import { SqliteBroker } from "../src/store/sqlite/sqlite-broker.js";
import { mainIfEntry, PAYLOAD_256, Recorder, type SuiteResult, scratch } from "./_lib.js";
import { type Raw, rawDb, rawFanOut } from "./_scenarios.js";

const MS = Number(process.env.BENCH_MS ?? 1500);
const SUBSCRIPTIONS = [1, 10, 100];
const GROUP = "Topic fan-out: publish/s by subscriptions (half the filters match)";

/** How many of `n` subscriptions take the message. */
const matching = (n: number) => Math.ceil(n / 2);

/** One caller publishing for `ms`; publishes per second. */
async function publishRate(b: SqliteBroker, topic: string, ms: number): Promise<number> {
  const msg = { body: PAYLOAD_256, subject: "orders.eu", properties: { tier: "gold" } };
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < ms) {
    await b.send(topic, msg);
    n++;
  }
  return (n * 1000) / (performance.now() - start);
}

export async function run(): Promise<SuiteResult> {
  const rec = new Recorder("Topic fan-out by subscription count");
  const tmp = scratch("topics");
  let fileNo = 0;
  for (const n of SUBSCRIPTIONS) {
    const copies = matching(n);
    let b: SqliteBroker;
    let r: Raw;
    const [ours, raw] = await rec.compare(
      {
        group: GROUP,
        unit: "publish/s",
        better: "higher",
        scenario: `${n} subscription${n > 1 ? "s" : ""}, ${copies} matching`,
      },
      [
        {
          system: "mqlite",
          mode: "embedded",
          vs: "raw better-sqlite3 (normal)",
          setup: async () => {
            b = new SqliteBroker(tmp.file(`ours-${fileNo++}.db`), { logger: silentLogger });
            for (let i = 0; i < n; i++) {
              // Alternate: even subscriptions match (tier gold), odd ones do not.
              const filter = i % 2 === 0 ? 'properties["tier"] == "gold"' : 'subject startsWith "orders.us"';
              await b.subscribe("t", `sub-${i}`, { filter });
            }
          },
          round: () => publishRate(b, "t", MS),
          teardown: () => b.close(),
        },
        {
          system: "raw better-sqlite3 (normal)",
          setup: () => {
            r = rawDb(tmp.file(`raw-${fileNo++}.db`), "normal");
          },
          round: () => rawFanOut(r, copies, MS),
          teardown: () => r.close(),
        },
      ],
    );
    if (ours && raw) {
      rec.add({
        group: GROUP,
        scenario: `${n} subscription${n > 1 ? "s" : ""}, ${copies} matching: copies stored`,
        system: "mqlite",
        mode: "embedded",
        value: ours.value * copies,
        rounds: ours.rounds.map((v) => v * copies),
        unit: "copies/s",
        better: "higher",
        vs: "raw better-sqlite3 (normal)",
        ...(ours.comparison && { comparison: ours.comparison }),
      });
      rec.add({
        group: GROUP,
        scenario: `${n} subscription${n > 1 ? "s" : ""}, ${copies} matching: copies stored`,
        system: "raw better-sqlite3 (normal)",
        value: raw.value * copies,
        rounds: raw.rounds.map((v) => v * copies),
        unit: "copies/s",
        better: "higher",
        ...(raw.comparison && { comparison: raw.comparison }),
      });
    }
  }
  tmp.cleanup();
  return rec.result;
}

await mainIfEntry(import.meta.url, run);
