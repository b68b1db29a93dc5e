// The embedded engine beside raw better-sqlite3 doing the equivalent minimal writes, in one run:
// single sends, batches of 64, end-to-end 4 producers × 4 consumers, for synchronous normal and full;
// and claim latency at a backlog of 1,000 and 1,000,000.
import Database from "better-sqlite3";
import { silentLogger } from "../src/engine/logger.js";
import { openBroker } from "../src/engine/open.js";
import type { SqliteBroker } from "../src/engine/sqlite-broker.js";
import type { SyncMode } from "../src/store/sync-mode.js";
import { median, PAYLOAD_256, percentile, printTable, type Row, rate, scratch } from "./_lib.js";

const DURATION_MS = Number(process.env.BENCH_MS ?? 2000);
const BIG_BACKLOG = Number(process.env.BENCH_BACKLOG ?? 1_000_000);
const tmp = scratch("engine");
let fileNo = 0;

function rawDb(sync: SyncMode): {
  db: Database.Database;
  insert: Database.Statement;
  claim: Database.Statement;
  del: Database.Statement;
} {
  const db = new Database(tmp.file(`raw-${fileNo++}.db`));
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${sync}`);
  db.exec(`CREATE TABLE m (id INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL, state TEXT NOT NULL,
    enqueued_at INTEGER NOT NULL, locked_until INTEGER NOT NULL DEFAULT 0, body BLOB NOT NULL) STRICT;
    CREATE INDEX m_claim ON m (queue, id) WHERE state = 'active';`);
  return {
    db,
    insert: db.prepare("INSERT INTO m (queue, state, enqueued_at, body) VALUES ('q', 'active', ?, ?)"),
    claim: db.prepare(`UPDATE m SET state = 'locked', locked_until = ? WHERE id =
      (SELECT id FROM m WHERE queue = 'q' AND state = 'active' ORDER BY id LIMIT 1) RETURNING id, body`),
    del: db.prepare("DELETE FROM m WHERE id = ?"),
  };
}

async function ours(sync: SyncMode): Promise<SqliteBroker> {
  const b = await openBroker(tmp.file(`ours-${fileNo++}.db`), { synchronous: sync, logger: silentLogger });
  await b.createQueue("q", { lockDurationMs: 60_000, maxDeliveryCount: 1000 });
  return b;
}

async function sendOne(sync: SyncMode): Promise<Row> {
  const b = await ours(sync);
  const msg = { body: PAYLOAD_256 };
  const o = await rate(DURATION_MS, async () => {
    await b.send("q", msg);
    return 1;
  });
  await b.close();
  const r = rawDb(sync);
  const tx = r.db.transaction(() => r.insert.run(Date.now(), PAYLOAD_256));
  const base = await rate(DURATION_MS, () => {
    tx.immediate();
    return 1;
  });
  r.db.close();
  return { scenario: `send 1/call, sync=${sync}`, ours: o, baseline: base, unit: "msg/s" };
}

async function sendBatch(sync: SyncMode): Promise<Row> {
  const b = await ours(sync);
  const batch = Array.from({ length: 64 }, () => ({ body: PAYLOAD_256 }));
  const o = await rate(DURATION_MS, async () => {
    await b.send("q", batch);
    return 64;
  });
  await b.close();
  const r = rawDb(sync);
  const tx = r.db.transaction(() => {
    for (let i = 0; i < 64; i++) r.insert.run(Date.now(), PAYLOAD_256);
  });
  const base = await rate(DURATION_MS, () => {
    tx.immediate();
    return 64;
  });
  r.db.close();
  return { scenario: `send batch 64, sync=${sync}`, ours: o, baseline: base, unit: "msg/s" };
}

/** 4 producers sending one message per call and 4 consumers receiving (up to 16) and completing each. */
async function endToEnd(sync: SyncMode): Promise<Row> {
  const b = await ours(sync);
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
  const start = performance.now();
  await new Promise((r) => setTimeout(r, DURATION_MS));
  const o = (completed * 1000) / (performance.now() - start);
  stop = true;
  await Promise.all([...producers, ...consumers]);
  await b.close();

  // Raw: the same life cycle, one transaction per step (insert; claim; delete).
  const r = rawDb(sync);
  const insert = r.db.transaction(() => r.insert.run(Date.now(), PAYLOAD_256));
  const claim = r.db.transaction(() => r.claim.get(Date.now() + 60_000) as { id: number } | undefined);
  const del = r.db.transaction((id: number) => r.del.run(id));
  const base = await rate(DURATION_MS, () => {
    insert.immediate();
    const row = claim.immediate();
    if (row) del.immediate(row.id);
    return 1;
  });
  r.db.close();
  return {
    scenario: `end-to-end 4×4 send→receive→complete, sync=${sync}`,
    ours: o,
    baseline: base,
    unit: "msg/s",
  };
}

/** Median and p99 latency of one claim+complete at a given backlog depth. */
async function claimLatency(backlog: number): Promise<{ p50: number; p99: number; rawP50: number }> {
  const b = await openBroker(tmp.file(`claim-${backlog}.db`), { logger: silentLogger, background: false });
  await b.createQueue("q", { lockDurationMs: 60_000 });
  const chunk = Array.from({ length: 1000 }, () => ({ body: PAYLOAD_256 }));
  for (let n = 0; n < backlog; n += 1000) await b.send("q", chunk);
  const samples: number[] = [];
  for (let i = 0; i < 500; i++) {
    const t = performance.now();
    const [m] = await b.receive("q");
    samples.push(performance.now() - t);
    await b.complete("q", m!.seqNumber, m!.lockToken!);
  }
  await b.close();
  const r = rawDb("normal");
  const fill = r.db.transaction(() => {
    for (let n = 0; n < backlog; n++) r.insert.run(0, PAYLOAD_256);
  });
  fill();
  const raw: number[] = [];
  for (let i = 0; i < 500; i++) {
    const t = performance.now();
    const row = r.claim.get(Date.now()) as { id: number };
    raw.push(performance.now() - t);
    r.del.run(row.id);
  }
  r.db.close();
  return { p50: median(samples), p99: percentile(samples, 99), rawP50: median(raw) };
}

const rows: Row[] = [];
for (const sync of ["normal", "full"] as const) {
  rows.push(await sendOne(sync));
  rows.push(await sendBatch(sync));
  rows.push(await endToEnd(sync));
}
printTable("Embedded engine vs raw better-sqlite3 (same machine, same run)", "raw better-sqlite3", rows);

const small = await claimLatency(1000);
const big = await claimLatency(BIG_BACKLOG);
console.log("\n### Claim latency (receive of one message, ms)\n");
console.log("| backlog | p50 | p99 | raw claim p50 |");
console.log("|--:|--:|--:|--:|");
console.log(`| 1,000 | ${small.p50.toFixed(3)} | ${small.p99.toFixed(3)} | ${small.rawP50.toFixed(3)} |`);
console.log(
  `| ${BIG_BACKLOG.toLocaleString("en-US")} | ${big.p50.toFixed(3)} | ${big.p99.toFixed(3)} | ${big.rawP50.toFixed(3)} |`,
);
console.log(
  `\nclaim p50 at ${BIG_BACKLOG.toLocaleString("en-US")} / at 1,000: ${(big.p50 / small.p50).toFixed(2)}×`,
);
