// The embedded broker beside raw better-sqlite3 doing the minimal equivalent writes, in one run:
// sends (one per call from one caller and from 16, batches of 64), end to end (4×4 and 16×16),
// fan-out to 10 subscriptions, and group commit under synchronous=full (16 concurrent producers
// against one transaction per send). Env: BENCH_MS (per round, default 1500), BENCH_ROUNDS.
import { silentLogger } from "../src/contract/logger.js";
import { openBroker } from "../src/open.js";
import { SqliteBroker } from "../src/store/sqlite/sqlite-broker.js";
import { type Contender, mainIfEntry, median, Recorder, ROUNDS, scratch } from "./_lib.js";
import {
  endToEnd,
  fanOutRate,
  fanOutTopic,
  type Raw,
  rawDb,
  rawEndToEnd,
  rawFanOut,
  rawSendBatch,
  rawSendOne,
  type Sync,
  sendRate,
} from "./_scenarios.js";

const MS = Number(process.env.BENCH_MS ?? 1500);

export async function run(): Promise<import("./_lib.js").SuiteResult> {
  const rec = new Recorder("Embedded broker vs raw better-sqlite3");
  const tmp = scratch("engine");
  let fileNo = 0;

  /** A contender holding one open broker (or raw database) across its rounds. */
  function ours(
    sync: Sync,
    round: (b: SqliteBroker) => Promise<number>,
    prepare?: (b: SqliteBroker) => Promise<void>,
  ): Contender {
    let b: SqliteBroker;
    return {
      system: "mqlite",
      mode: "embedded",
      vs: `raw better-sqlite3 (${sync})`,
      setup: async () => {
        b = new SqliteBroker(tmp.file(`ours-${fileNo++}.db`), { synchronous: sync, logger: silentLogger });
        await b.createQueue("q", { lockDurationMs: 60_000, maxDeliveryCount: 1000 });
        await prepare?.(b);
      },
      round: () => round(b),
      teardown: () => b.close(),
    };
  }
  function raw(sync: Sync, round: (r: Raw) => number, system = `raw better-sqlite3 (${sync})`): Contender {
    let r: Raw;
    return {
      system,
      setup: () => {
        r = rawDb(tmp.file(`raw-${fileNo++}.db`), sync);
      },
      round: () => round(r),
      teardown: () => r.close(),
    };
  }
  const group = "Broker, embedded: mqlite vs raw better-sqlite3";
  const msgs = { unit: "msg/s", better: "higher" as const, group };

  for (const sync of ["normal", "full"] as const) {
    await rec.compare({ ...msgs, scenario: `send 1/call, 1 caller, sync=${sync}` }, [
      ours(sync, (b) => sendRate(b, "q", 1, 1, MS)),
      raw(sync, (r) => rawSendOne(r, MS)),
    ]);
    await rec.compare({ ...msgs, scenario: `send 1/call, 16 callers, sync=${sync}` }, [
      ours(sync, (b) => sendRate(b, "q", 16, 1, MS)),
      raw(sync, (r) => rawSendOne(r, MS)),
    ]);
    await rec.compare({ ...msgs, scenario: `send batch 64, sync=${sync}` }, [
      ours(sync, (b) => sendRate(b, "q", 1, 64, MS)),
      raw(sync, (r) => rawSendBatch(r, 64, MS)),
    ]);
  }
  for (const [p, c] of [
    [4, 4],
    [16, 16],
  ] as const) {
    await rec.compare({ ...msgs, scenario: `end-to-end ${p}×${c} send→receive→complete` }, [
      ours("normal", (b) => endToEnd(b, "q", p, c, MS)),
      raw("normal", (r) => rawEndToEnd(r, MS)),
    ]);
  }
  await rec.compare(
    {
      group,
      unit: "publish/s",
      better: "higher",
      scenario: "fan-out to 10 subscriptions, 4 publishers",
    },
    [
      ours(
        "normal",
        (b) => fanOutRate(b, "t", 4, MS),
        (b) => fanOutTopic(b, "t", 10),
      ),
      raw("normal", (r) => rawFanOut(r, 10, MS, "t-sub-")),
    ],
  );

  // Group commit: one fsync per group instead of one per call.
  const gc = "Group commit, synchronous=full";
  await rec.compare({ group: gc, unit: "msg/s", better: "higher", scenario: "send 1/call" }, [
    {
      ...ours("full", (b) => sendRate(b, "q", 16, 1, MS)),
      system: "mqlite, 16 producers",
      vs: "raw better-sqlite3, one transaction per send",
    },
    {
      ...ours("full", (b) => sendRate(b, "q", 1, 1, MS)),
      system: "mqlite, 1 producer",
      vs: "raw better-sqlite3, one transaction per send",
    },
    raw("full", (r) => rawSendOne(r, MS), "raw better-sqlite3, one transaction per send"),
  ]);
  // The proof that a group shares one commit (one WAL fsync under synchronous=full): the writer's
  // commits counted while 16 producers send, against the messages they stored (the sends of a group
  // may be one write: see core/send-batches.ts).
  for (const producers of [16, 1]) {
    const rounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const b = await openBroker(tmp.file(`commits-${fileNo++}.db`), {
        synchronous: "full",
        logger: silentLogger,
      });
      await b.createQueue("q");
      const writer = (b as unknown as { writer: { flush(): void; pending: unknown[] } }).writer;
      const flush = writer.flush.bind(writer);
      let commits = 0;
      writer.flush = () => {
        if (writer.pending.length > 0) commits++;
        flush();
      };
      await sendRate(b, "q", producers, 1, MS);
      // Every message sent, warm-up included, as the commits are: the queue was empty.
      rounds.push((await b.stats("q")).active / commits);
      await b.close();
    }
    rec.add({
      group: gc,
      scenario: "messages per commit (one WAL fsync each)",
      system: `mqlite, ${producers} producer${producers > 1 ? "s" : ""}`,
      mode: "embedded",
      value: median(rounds),
      rounds,
      unit: "msg/commit",
      better: "higher",
    });
  }
  return rec.result;
}

await mainIfEntry(import.meta.url, run);
