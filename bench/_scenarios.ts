// Workloads written once against the `Broker` contract and the job face, run embedded (engine.ts,
// jobs.ts) and over HTTP (http.ts) alike; and raw better-sqlite3 doing the minimal equivalent.
import Database from "better-sqlite3";
import type { Broker } from "../src/contract/broker.js";
import { Queue } from "../src/jobs/index.js";
import { engineQueue } from "../src/jobs/naming.js";
import { concurrentRate, JOB_ARG, JOBS, PAYLOAD_256, sleep } from "./_lib.js";

/** Stats as a query that reads every row of the queue (what Stats did before its counts were kept). */
export const FULL_READ_STATS = `SELECT state, count(*) AS n, min(CASE WHEN state IN ('active', 'locked') THEN enqueued_at END)
  FROM messages WHERE queue = ? GROUP BY state`;

/** Sends for `ms`: `producers` concurrent callers, `batch` messages per call; messages per second. */
export function sendRate(b: Broker, queue: string, producers: number, batch: number, ms: number) {
  const one = { body: PAYLOAD_256 };
  // A body of its own per message, as a real batch has: identical values would be bound once.
  const many = Array.from({ length: batch }, () => ({ body: Buffer.from(PAYLOAD_256) }));
  return concurrentRate(
    producers,
    ms,
    async () => (await b.send(queue, batch === 1 ? one : many)).length,
    Math.min(300, ms / 5),
  );
}

/**
 * `producers` callers sending one message per call and `consumers` receiving up to 16 (long-poll)
 * and completing each; completed messages per second.
 */
export async function endToEnd(
  b: Broker,
  queue: string,
  producers: number,
  consumers: number,
  ms: number,
): Promise<number> {
  let completed = 0;
  let stop = false;
  const msg = { body: PAYLOAD_256 };
  const loops = [
    ...Array.from({ length: producers }, async () => {
      while (!stop) await b.send(queue, msg);
    }),
    ...Array.from({ length: consumers }, async () => {
      while (!stop) {
        const got = await b.receive(queue, { maxMessages: 16, waitMs: 50 });
        await Promise.all(got.map((m) => b.complete(queue, m.seqNumber, m.lockToken!)));
        completed += got.length;
      }
    }),
  ];
  await sleep(Math.min(300, ms / 5));
  completed = 0;
  const start = performance.now();
  await sleep(ms);
  const rate = (completed * 1000) / (performance.now() - start);
  stop = true;
  await Promise.all(loops);
  // Leave an empty queue for the next round.
  await b.purge(queue).catch(() => {});
  for (;;) {
    const got = await b.receive(queue, { maxMessages: 256, mode: "receive-and-delete" });
    if (got.length === 0) break;
  }
  return rate;
}

/** Creates `topic` with `n` queue subscriptions (no filter). */
export async function fanOutTopic(b: Broker, topic: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await b.subscribe(topic, `${topic}-sub-${i}`);
}

/** Publishes for `ms` from `publishers` concurrent callers; publishes per second (each makes `n` copies). */
export function fanOutRate(b: Broker, topic: string, publishers: number, ms: number): Promise<number> {
  const msg = { body: PAYLOAD_256 };
  return concurrentRate(publishers, ms, async () => (await b.send(topic, msg)).length, Math.min(300, ms / 5));
}

// --- the job face ------------------------------------------------------------------------------

export const JOB_GROUP = "Job queue: mqlite vs raw SQLite and peers";
/** The engine queue a job lands in when it names none (the job face's "default"). */
export const JOB_QUEUE = engineQueue(undefined, "default");
export const DRAIN_CONCURRENCY = [1, 4, 16];

export type NoopQueue = Queue<{ noop: (p: string) => void }>;

export function noopQueue(options: ConstructorParameters<typeof Queue>[0]): NoopQueue {
  return new Queue(options).task("noop", (_p: string) => {});
}

/** Enqueues `n` jobs one per call (sequential caller); jobs per second. */
export async function enqueueOne(q: NoopQueue, n: number): Promise<number> {
  await q.enqueue("noop", [JOB_ARG]);
  const t = performance.now();
  for (let i = 0; i < n; i++) await q.enqueue("noop", [JOB_ARG]);
  return (n * 1000) / (performance.now() - t);
}

/**
 * Enqueues `n` jobs in calls of `per`; jobs per second. One call first, untimed (as `enqueueOne`
 * does): it creates the job queue, as the raw baseline's table exists before its clock starts.
 */
export async function enqueueBatch(q: NoopQueue, n: number, per: number): Promise<number> {
  const items = Array.from({ length: per }, () => ({ args: [JOB_ARG] as [string] }));
  await q.enqueueMany("noop", items);
  const t = performance.now();
  for (let i = 0; i < n; i += per) await q.enqueueMany("noop", i + per <= n ? items : items.slice(0, n - i));
  return (n * 1000) / (performance.now() - t);
}

/** Fills the queue with `JOBS` jobs, then drains them with one worker at `concurrency`; jobs per second. */
export async function drain(q: NoopQueue, concurrency: number, n = JOBS): Promise<number> {
  const items = Array.from({ length: 1000 }, () => ({ args: [JOB_ARG] as [string] }));
  for (let i = 0; i < n; i += 1000)
    await q.enqueueMany("noop", i + 1000 <= n ? items : items.slice(0, n - i));
  let done = 0;
  let finish!: () => void;
  const finished = new Promise<void>((r) => {
    finish = r;
  });
  const onDone = () => {
    if (++done === n) finish();
  };
  q.on("job.completed", onDone);
  const t = performance.now();
  const w = q.runWorker({ concurrency });
  await finished;
  const rate = (n * 1000) / (performance.now() - t);
  await w.stop();
  q.off("job.completed", onDone);
  return rate;
}

// --- raw better-sqlite3: the minimal equivalent writes ----------------------------------------

export type Sync = "normal" | "full";

export interface Raw {
  db: Database.Database;
  /** The queue name every row carries (the one the system compared with writes). */
  queue: string;
  insert: Database.Statement;
  claim: Database.Statement;
  claimMany: Database.Statement;
  del: Database.Statement;
  close(): void;
}

/**
 * One table, one partial claim index, ids never reused (AUTOINCREMENT): the least a queue can be.
 * Its rows carry `queue` as their queue name: the same name the system it is compared with writes,
 * so both store the same bytes.
 */
export function rawDb(file: string, sync: Sync, queue = "q"): Raw {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${sync}`);
  db.exec(`CREATE TABLE IF NOT EXISTS m (id INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL,
    state TEXT NOT NULL, enqueued_at INTEGER NOT NULL, locked_until INTEGER NOT NULL DEFAULT 0,
    body BLOB NOT NULL) STRICT;
    CREATE INDEX IF NOT EXISTS m_claim ON m (queue, id) WHERE state = 'active';`);
  return {
    db,
    queue,
    insert: db.prepare("INSERT INTO m (queue, state, enqueued_at, body) VALUES (?, 'active', ?, ?)"),
    claim: db.prepare(`UPDATE m SET state = 'locked', locked_until = ? WHERE id =
      (SELECT id FROM m WHERE queue = ? AND state = 'active' ORDER BY id LIMIT 1) RETURNING id, body`),
    claimMany: db.prepare(`UPDATE m SET state = 'locked', locked_until = ? WHERE id IN
      (SELECT id FROM m WHERE queue = ? AND state = 'active' ORDER BY id LIMIT ?) RETURNING id, body`),
    del: db.prepare("DELETE FROM m WHERE id = ?"),
    close: () => db.close(),
  };
}

/** Raw: one insert per transaction; inserts per second. */
export function rawSendOne(r: Raw, ms: number): number {
  const tx = r.db.transaction(() => r.insert.run(r.queue, Date.now(), PAYLOAD_256));
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < ms) {
    tx.immediate();
    n++;
  }
  return (n * 1000) / (performance.now() - start);
}

/** Raw: `batch` inserts per transaction; inserts per second. */
export function rawSendBatch(r: Raw, batch: number, ms: number): number {
  const tx = r.db.transaction(() => {
    const now = Date.now();
    for (let i = 0; i < batch; i++) r.insert.run(r.queue, now, PAYLOAD_256);
  });
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < ms) {
    tx.immediate();
    n += batch;
  }
  return (n * 1000) / (performance.now() - start);
}

/**
 * Raw: `copies` inserts (one per subscription, named `${prefix}${i}` as the compared system names
 * its subscriptions) per transaction; publishes per second.
 */
export function rawFanOut(r: Raw, copies: number, ms: number, prefix = "sub-"): number {
  const queues = Array.from({ length: copies }, (_, i) => `${prefix}${i}`);
  const tx = r.db.transaction(() => {
    const now = Date.now();
    for (const q of queues) r.insert.run(q, now, PAYLOAD_256);
  });
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < ms) {
    tx.immediate();
    n++;
  }
  return (n * 1000) / (performance.now() - start);
}

/** Raw: insert; claim; delete, each its own transaction; messages per second. */
export function rawEndToEnd(r: Raw, ms: number): number {
  const insert = r.db.transaction(() => r.insert.run(r.queue, Date.now(), PAYLOAD_256));
  const claim = r.db.transaction(
    () => r.claim.get(Date.now() + 60_000, r.queue) as { id: number } | undefined,
  );
  const del = r.db.transaction((id: number) => r.del.run(id));
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < ms) {
    insert.immediate();
    const row = claim.immediate();
    if (row) del.immediate(row.id);
    n++;
  }
  return (n * 1000) / (performance.now() - start);
}

/**
 * Raw: inserts `n` rows (a job's body) in transactions of `per`; jobs per second. Counted like the
 * job face and its peers, so every contender of the group does the same work: the same number of
 * jobs into a fresh file.
 */
export function rawEnqueue(r: Raw, per: number, n = JOBS): number {
  const body = Buffer.from(JSON.stringify([JOB_ARG]));
  const tx = r.db.transaction((rows: number) => {
    const now = Date.now();
    for (let i = 0; i < rows; i++) r.insert.run(r.queue, now, body);
  });
  tx.immediate(1); // as the job face's untimed first call
  const t = performance.now();
  for (let i = 0; i < n; i += per) tx.immediate(Math.min(per, n - i));
  return (n * 1000) / (performance.now() - t);
}

/** Raw: fills `n` rows, then claims one and deletes it (autocommit each) until empty; jobs per second. */
export function rawDrain(r: Raw, n = JOBS): number {
  const body = Buffer.from(JSON.stringify([JOB_ARG]));
  r.db.transaction(() => {
    for (let i = 0; i < n; i++) r.insert.run(r.queue, Date.now(), body);
  })();
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    const row = r.claim.get(Date.now() + 30_000, r.queue) as { id: number };
    r.del.run(row.id);
  }
  return (n * 1000) / (performance.now() - t);
}
