// The crash loop: `mqlite serve` as a child process under mixed load (sends, receives, settles,
// fan-out publishes to a topic with three queue subscriptions, job enqueues and job-topic publishes
// run by a job worker in another process connected by URL), killed with SIGKILL at random points
// and restarted on the same file and port. After every kill the file is checked directly (integrity,
// every acknowledged effect) and at the end everything left is drained.
//
// Used by crash-loop.test.ts (a handful of kills) and crash-loop.soak.ts (50).
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { connect } from "../../src/client/index.js";
import type { Broker } from "../../src/contract/broker.js";
import { MqliteError, UnavailableError } from "../../src/contract/errors.js";
import { Queue } from "../../src/jobs/index.js";
import { collectLines, spawnChild } from "../support/child.js";
import { freePort, type ServedChild, startServedChild } from "../support/served-child.js";
import { tempDir } from "../support/temp.js";

const TOKEN = "crash-loop-token";
const PLAIN = "work";
const FAN_TOPIC = "fan";
const FAN_SUBS = ["fan-a", "fan-b", "fan-c"];
const JOB_TOPIC = "jt";
const JOB_QUEUE = "default";
/** Short leases, so held messages come back within a round. */
const LEASE_MS = 1000;

export interface CrashLoopOptions {
  kills: number;
  /** Each round runs the load this long (a random point in [min, max]) before the SIGKILL. */
  minRunMs: number;
  maxRunMs: number;
  log?: (line: string) => void;
}

export interface CrashLoopReport {
  kills: number;
  acknowledgedSends: number;
  acknowledgedCompletes: number;
  heldAtKill: number;
  jobs: number;
  topicPublishes: number;
  networkErrors: number;
  ms: number;
}

/** What the load knows about one message (a queue and a message id). */
interface Tracked {
  queue: string;
  /** The send was acknowledged (false: it failed without an answer, so it may or may not exist). */
  acked: boolean;
  /** A Complete was acknowledged, or sent without an answer. */
  done?: "acked" | "unknown";
  completing?: boolean;
  /** The round in which it was last received and left locked (no settle). */
  heldInRound?: number;
  /** The last round in which it was received. */
  receivedInRound?: number;
  /** What happened to it, for a failure's message. */
  events?: string[];
}

function record(t: Tracked, event: string): void {
  t.events ??= [];
  t.events.push(event);
}

/** A job (enqueued, or a task subscription's delivery of a publish). */
interface TrackedJob {
  key: string;
  seq: number;
  task: "job" | "topic-job";
}

/** Network failures: the server was killed under the request, or is down. */
function isNetworkError(err: unknown): boolean {
  if (err instanceof UnavailableError) return true;
  if (err instanceof MqliteError) return false;
  const text = `${String(err)} ${String((err as { cause?: unknown })?.cause ?? "")}`;
  return /fetch failed|ECONNRESET|ECONNREFUSED|other side closed|terminated|socket|EPIPE|aborted/i.test(text);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));

export async function runCrashLoop(options: CrashLoopOptions): Promise<CrashLoopReport> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const tmp = tempDir("mqlite-crash-loop-");
  const db = tmp.file("mq.db");
  const port = await freePort();
  let server: ServedChild | undefined;
  let worker: ReturnType<typeof spawnChild> | undefined;
  const client: Broker = connect(`http://127.0.0.1:${port}`, { token: TOKEN });
  const failures: string[] = [];
  const fail = (what: string) => {
    if (failures.length < 50) failures.push(what);
  };

  const messages = new Map<string, Tracked>();
  const keyOf = (queue: string, id: string) => `${queue}\u0000${id}`;
  const jobs = new Map<number, TrackedJob>();
  const maybeJobKeys = new Set<string>();
  const logIds = new Map<number, string>();
  /** Job rows seen completed after some kill: they must stay completed. */
  const completedJobs = new Set<number>();
  let round = 0;
  let stopping = false;
  let wake: (() => void) | undefined;
  let resumed = Promise.resolve();
  let networkErrors = 0;
  let acknowledgedCompletes = 0;
  let heldAtKill = 0;
  let counter = 0;
  const ranKeys = new Set<string>();

  /** Runs an operation of the load; network failures while the server dies are expected. */
  const attempt = async <T>(what: string, fn: () => Promise<T>): Promise<T | undefined> => {
    await resumed;
    try {
      return await fn();
    } catch (err) {
      if (isNetworkError(err)) {
        networkErrors++;
        return undefined;
      }
      // A named error while the server was being killed can only be a network one; anything else
      // (a 5xx above all) is a broken promise.
      fail(`${what}: ${String(err)}`);
      return undefined;
    }
  };

  const startServer = async () => {
    server = await startServedChild({ db, port, tokens: [TOKEN] });
    wake?.();
  };

  // --- the load -----------------------------------------------------------------------------------

  const sender = async () => {
    while (!stopping) {
      const n = pick(1, 4);
      const ids = Array.from({ length: n }, () => `w${++counter}`);
      for (const id of ids) messages.set(keyOf(PLAIN, id), { queue: PLAIN, acked: false });
      const seqs = await attempt("send", () =>
        client.send(
          PLAIN,
          ids.map((id) => ({ body: `body of ${id}`, messageId: id })),
        ),
      );
      if (seqs) for (const id of ids) messages.get(keyOf(PLAIN, id))!.acked = true;
      await sleep(pick(0, 10));
    }
  };

  const publisher = async () => {
    while (!stopping) {
      const id = `f${++counter}`;
      for (const sub of FAN_SUBS) messages.set(keyOf(sub, id), { queue: sub, acked: false });
      const seqs = await attempt("publish to fan", () =>
        client.send(FAN_TOPIC, { body: `fan ${id}`, messageId: id, properties: { n: String(counter) } }),
      );
      if (seqs) for (const sub of FAN_SUBS) messages.get(keyOf(sub, id))!.acked = true;
      await sleep(pick(0, 15));
    }
  };

  const consumer = async (queue: string) => {
    while (!stopping) {
      const got = await attempt(`receive ${queue}`, () =>
        client.receive(queue, { maxMessages: pick(1, 8), waitMs: 200 }),
      );
      if (!got) {
        await sleep(20);
        continue;
      }
      for (const m of got) {
        const key = keyOf(queue, m.messageId ?? "");
        const t = messages.get(key);
        if (!t) {
          fail(`received a message nobody sent: ${queue} ${m.messageId}`);
          continue;
        }
        if (t.done === "acked")
          fail(`completed message reappeared: ${queue} ${m.messageId} (seq ${m.seqNumber})`);
        t.receivedInRound = round;
        record(t, `r${round} received seq ${m.seqNumber} delivery ${m.deliveryCount}`);
        const roll = Math.random();
        if (roll < 0.65) {
          t.completing = true;
          const ok = await attempt(`complete ${queue}`, async () => {
            try {
              await client.complete(queue, m.seqNumber, m.lockToken!);
              return "ok" as const;
            } catch (err) {
              // The lease lapsed meanwhile (a slow round): the message is simply redelivered.
              if ((err as { code?: string }).code === "lock_lost") return "lost" as const;
              throw err;
            }
          });
          t.completing = false;
          record(t, `complete: ${ok ?? "no answer"}`);
          if (ok === "ok") {
            t.done = "acked";
            acknowledgedCompletes++;
          } else if (ok === undefined && t.done === undefined) t.done = "unknown";
        } else if (roll < 0.8) {
          record(t, "abandon");
          await attempt(`abandon ${queue}`, () =>
            client.abandon(queue, m.seqNumber, m.lockToken!).catch((err) => {
              if ((err as { code?: string }).code !== "lock_lost") throw err;
            }),
          );
        } else {
          t.heldInRound = round; // left locked: in flight if the server dies now
          record(t, "held");
        }
      }
    }
  };

  const jobQueue = new Queue({ broker: client });
  const enqueuer = async () => {
    while (!stopping) {
      const key = `j${++counter}`;
      maybeJobKeys.add(key);
      const id = await attempt("enqueue", () =>
        jobQueue.enqueue("job", [key], { timeoutMs: 2000, maxRetries: 100 }),
      );
      if (id) jobs.set(Number(id), { key, seq: Number(id), task: "job" });
      await sleep(pick(5, 30));
    }
  };

  const topicPublisher = async () => {
    while (!stopping) {
      const key = `t${++counter}`;
      maybeJobKeys.add(key);
      const result = await attempt("publish to jt", () =>
        client.publish(JOB_TOPIC, {
          body: JSON.stringify([key]),
          contentType: "application/json",
          messageId: key,
          lockDurationMs: 3000,
          maxDeliveryCount: 101,
        }),
      );
      if (result) {
        assert.equal(result.deliveries.length, 1, "one delivery to the task subscription");
        const d = result.deliveries[0]!;
        jobs.set(d.seqNumber, { key, seq: d.seqNumber, task: "topic-job" });
        if (result.logId === undefined) fail(`publish ${key} stored no log row`);
        else logIds.set(result.logId, key);
      }
      await sleep(pick(5, 30));
    }
  };

  // --- the checks after a kill ----------------------------------------------------------------------

  const jobStates = () => {
    const raw = new Database(db, { readonly: true });
    try {
      const rows = raw.prepare("SELECT id, state FROM messages WHERE queue = ?").all(JOB_QUEUE) as {
        id: number;
        state: string;
      }[];
      return new Map(rows.map((r) => [r.id, r.state]));
    } finally {
      raw.close();
    }
  };

  /** How a tracked message stands in the file, for a failure's message. */
  const storedRow = (key: string): string => {
    const [queue, id] = key.split("\u0000");
    const raw = new Database(db, { readonly: true });
    try {
      const row = raw
        .prepare(
          "SELECT id, state, locked_until, delivery_count, visible_at FROM messages WHERE queue = ? AND message_id = ?",
        )
        .get(queue, id);
      return row ? `stored ${JSON.stringify(row)} at ${Date.now()}` : "not stored";
    } finally {
      raw.close();
    }
  };

  const checkFile = () => {
    const raw = new Database(db, { readonly: true });
    try {
      assert.equal(raw.pragma("integrity_check", { simple: true }), "ok", "integrity_check");
      assert.deepEqual(raw.pragma("foreign_key_check"), [], "foreign_key_check");
      const rows = raw
        .prepare(
          `SELECT queue, message_id AS id, count(*) AS n, min(state) AS state FROM messages
           WHERE queue IN (${[PLAIN, ...FAN_SUBS].map(() => "?").join(",")}) GROUP BY queue, message_id`,
        )
        .all(PLAIN, ...FAN_SUBS) as { queue: string; id: string; n: number; state: string }[];
      const present = new Map<string, { n: number; state: string }>();
      for (const r of rows) present.set(keyOf(r.queue, r.id), r);
      for (const [key, r] of present) {
        if (r.n > 1) fail(`${key.replace("\u0000", "/")} stored ${r.n} times`);
        if (!messages.has(key)) fail(`${key.replace("\u0000", "/")} exists but was never sent`);
      }
      for (const [key, t] of messages) {
        const row = present.get(key);
        const name = key.replace("\u0000", "/");
        if (t.done === "acked" && row) fail(`completed ${name} reappeared (${row.state})`);
        if (t.acked && t.done === undefined && !t.completing && !row) fail(`acknowledged ${name} was lost`);
        if (t.heldInRound === round && t.done === undefined && !t.completing) heldAtKill++;
      }
      // Jobs: every acknowledged one is stored, and a completed one stays completed.
      const jobRows = new Map(
        (
          raw.prepare("SELECT id, state FROM messages WHERE queue = ?").all(JOB_QUEUE) as {
            id: number;
            state: string;
          }[]
        ).map((r) => [r.id, r.state]),
      );
      for (const [seq, j] of jobs) {
        const state = jobRows.get(seq);
        if (state === undefined) fail(`acknowledged job ${j.key} (seq ${seq}) was lost`);
        if (completedJobs.has(seq) && state !== "completed")
          fail(`completed job ${j.key} (seq ${seq}) is ${state} again`);
        if (state === "completed") completedJobs.add(seq);
      }
      // The job topic's log: one row per acknowledged publish, none twice.
      const logRows = raw
        .prepare("SELECT id, message_id AS key FROM topic_messages WHERE topic = ?")
        .all(JOB_TOPIC) as { id: number; key: string }[];
      const byId = new Map(logRows.map((r) => [r.id, r.key]));
      for (const [id, key] of logIds) if (byId.get(id) !== key) fail(`log row ${id} of ${key} was lost`);
      const perKey = new Map<string, number>();
      for (const r of logRows) perKey.set(r.key, (perKey.get(r.key) ?? 0) + 1);
      for (const [key, n] of perKey) if (n > 1) fail(`publish ${key} logged ${n} times`);
    } finally {
      raw.close();
    }
  };

  try {
    await startServer();
    await client.createQueue(PLAIN, { lockDurationMs: LEASE_MS, maxDeliveryCount: 1000 });
    for (const sub of FAN_SUBS) {
      await client.subscribe(FAN_TOPIC, sub, {
        config: { lockDurationMs: LEASE_MS, maxDeliveryCount: 1000 },
      });
    }
    await client.createQueue(JOB_QUEUE, { lockDurationMs: 3000, maxDeliveryCount: 101 });
    await client.subscribeLog(JOB_TOPIC, "audit");

    worker = spawnChild("crash-worker-child.ts", [server!.url, TOKEN]);
    let markReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    const workerOutput = collectLines(worker, (line) => {
      if (line.startsWith("READY")) markReady();
      const m = /^RAN (\S+) (\S+) /.exec(line);
      if (m) ranKeys.add(m[2]!);
    });
    await ready;
    // The worker writes its task subscription at start.
    for (let i = 0; ; i++) {
      const subs = await client.listSubscriptions();
      if (subs.some((s) => s.topic === JOB_TOPIC && s.name === "topic-job")) break;
      if (i > 600) throw new Error("the worker never subscribed topic-job to jt");
      await sleep(50);
    }

    const actors = [
      sender(),
      sender(),
      publisher(),
      consumer(PLAIN),
      consumer(PLAIN),
      ...FAN_SUBS.map((s) => consumer(s)),
      enqueuer(),
      topicPublisher(),
    ];

    for (round = 1; round <= options.kills; round++) {
      await sleep(pick(options.minRunMs, options.maxRunMs));
      resumed = new Promise<void>((resolve) => {
        wake = resolve;
      });
      await server!.kill();
      const exit = await server!.exited;
      assert.equal(exit.signal, "SIGKILL", `the server ended on its own:\n${server!.output()}`);
      // Let requests that were cut off finish failing before the file is checked.
      await sleep(100);
      checkFile();
      log(`round ${round}: killed; ${messages.size} messages, ${jobs.size} jobs tracked`);
      await startServer();
      if (failures.length > 0) break;
    }
    stopping = true;
    await Promise.all(actors);

    // Drain: leases lapse, then everything left is received (it must be claimable) and completed.
    await sleep(LEASE_MS + 200);
    round++;
    for (const queue of [PLAIN, ...FAN_SUBS]) {
      for (let empty = 0; empty < 2; ) {
        const got = await client.receive(queue, { maxMessages: 64, waitMs: 300 });
        if (got.length === 0) {
          empty++;
          continue;
        }
        empty = 0;
        const results = await client.completeBatch(
          queue,
          got.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken! })),
        );
        got.forEach((m, i) => {
          const t = messages.get(keyOf(queue, m.messageId ?? ""));
          if (t) record(t, `drain received delivery ${m.deliveryCount}: ${JSON.stringify(results[i])}`);
          if (!t) fail(`drained a message nobody sent: ${queue} ${m.messageId}`);
          else if (t.done === "acked")
            fail(`completed message reappeared at the drain: ${queue} ${m.messageId}`);
          else if (results[i]?.ok) t.done = "acked"; // else its lease lapsed: it comes back
        });
      }
    }
    for (const [key, t] of messages) {
      if (t.acked && t.done === undefined)
        fail(
          `acknowledged ${key.replace("\u0000", "/")} never came back (${storedRow(key)}; ${t.events?.join(", ")})`,
        );
      if (t.heldInRound !== undefined && t.done === undefined)
        fail(
          `held ${key.replace("\u0000", "/")} was never redelivered (${storedRow(key)}; ${t.events?.join(", ")})`,
        );
    }

    // Every acknowledged job runs and ends completed.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const states = jobStates();
      const pending = [...jobs.keys()].filter((seq) => states.get(seq) !== "completed");
      const notRun = [...jobs.values()].filter((j) => !ranKeys.has(j.key));
      if (pending.length === 0 && notRun.length === 0) break;
      if (Date.now() > deadline) {
        fail(
          `${pending.length} jobs not completed (e.g. seq ${pending[0]} ${states.get(pending[0]!)}), ` +
            `${notRun.length} never ran`,
        );
        break;
      }
      await sleep(250);
    }
    if (worker.exitCode !== null || worker.signalCode !== null)
      fail(`the worker process died:\n${(await workerOutput).stderr}`);
    for (const key of ranKeys) if (!maybeJobKeys.has(key)) fail(`the worker ran ${key}, never enqueued`);

    await server!.stop();
    checkFile();
    assert.deepEqual(failures, [], failures.join("\n"));
    return {
      kills: options.kills,
      acknowledgedSends: [...messages.values()].filter((t) => t.acked).length,
      acknowledgedCompletes,
      heldAtKill,
      jobs: jobs.size,
      topicPublishes: logIds.size,
      networkErrors,
      ms: Date.now() - started,
    };
  } finally {
    stopping = true;
    wake?.();
    worker?.kill("SIGKILL");
    await jobQueue.close().catch(() => {});
    await client.close().catch(() => {});
    await server?.kill();
    tmp.cleanup();
  }
}
