// The served broker over loopback: the server (broker + a bare endpoint of the same HTTP stack, hono
// on @hono/node-server, reading the body and answering a constant) runs in a child process, the
// load in this one (one core each). Single sends and batches of 64 with 16 keep-alive connections
// (autocannon) beside the bare endpoint; end to end 4×4 and 16×16, fan-out to 10 subscriptions,
// and the job face (enqueue, drain at concurrency 1/4/16) through the remote client.
// First, on a server of its own: `/healthz` while maximal requests run and the server's memory
// through every hostile request (bench/_stall.ts); `--stall` measures only that.
// Env: BENCH_DURATION (s per autocannon round, default 3), BENCH_MS, BENCH_JOBS, MQLITE_SYNC,
// BENCH_GLIBC_DEFAULTS (1: the server without `npm start`'s MALLOC_MMAP_THRESHOLD_).
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import autocannon from "autocannon";
import { Hono } from "hono";
import { connect } from "../src/client/index.js";
import type { Broker } from "../src/contract/broker.js";
import { silentLogger } from "../src/contract/logger.js";
import { openBroker } from "../src/open.js";
import { startServer } from "../src/server/index.js";
import { parseSyncMode } from "../src/store/sqlite/sync-mode.js";
import {
  type Contender,
  JOBS,
  mainIfEntry,
  markdownTables,
  PAYLOAD_256,
  Recorder,
  type SuiteResult,
  scratch,
} from "./_lib.js";
import {
  DRAIN_CONCURRENCY,
  drain,
  endToEnd,
  enqueueBatch,
  enqueueOne,
  fanOutRate,
  fanOutTopic,
  JOB_GROUP,
  noopQueue,
  sendRate,
} from "./_scenarios.js";
import { measureStall } from "./_stall.js";

const TOKEN = "bench-token";
const DURATION = Number(process.env.BENCH_DURATION ?? 3);
const MS = Number(process.env.BENCH_MS ?? 1500);
const CONNECTIONS = 16;
const BODY = PAYLOAD_256.toString("base64");

/** Child mode: the broker (file-backed, auth on, access log off) and the bare endpoint. */
async function serveBoth(): Promise<void> {
  const dir = scratch("http");
  const broker = await openBroker(dir.file("mq.db"), {
    synchronous: parseSyncMode(process.env.MQLITE_SYNC),
    logger: silentLogger,
  });
  await broker.createQueue("bench");
  await broker.createQueue("e2e", { lockDurationMs: 60_000, maxDeliveryCount: 1000 });
  // BENCH_MAX_LARGE_BODY_BYTES: the server's large-body budget (default its own, one maximal request).
  const budget = Number(process.env.BENCH_MAX_LARGE_BODY_BYTES ?? 0);
  const mqlite = await startServer({
    broker,
    port: 0,
    tokens: [TOKEN],
    logger: silentLogger,
    ...(budget > 0 && { maxLargeBodyBytes: budget }),
  });
  const bare = new Hono();
  bare.post("/bare", async (c) => {
    await c.req.text();
    return c.body('{"ok":true}\n', 200, { "Content-Type": "application/json" });
  });
  const bareServer = serve({ fetch: bare.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
    process.stdout.write(
      `${JSON.stringify({ mqlite: mqlite.url, bare: `http://127.0.0.1:${info.port}` })}\n`,
    );
  });
  process.on("SIGTERM", async () => {
    bareServer.close();
    await mqlite.close();
    process.exit(0);
  });
}

function startChild(): Promise<{ child: ChildProcess; urls: { mqlite: string; bare: string } }> {
  // The server runs as `npm start` runs it: glibc returning freed large buffers to the system
  // (docs/serving.md#memory). BENCH_GLIBC_DEFAULTS=1 leaves the C library's defaults.
  const env = { ...process.env };
  if (process.env.BENCH_GLIBC_DEFAULTS !== "1") env.MALLOC_MMAP_THRESHOLD_ ??= "131072";
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--serve"], {
    stdio: ["ignore", "pipe", "inherit"],
    env,
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve({ child, urls: JSON.parse(line) });
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
}

const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const sendBody = (queue: string, n: number) =>
  JSON.stringify({ queue, messages: Array.from({ length: n }, () => ({ body: BODY })) });

/** Requests per second with 16 connections, after checking that every answer was a 200. */
async function cannon(url: string, body: string): Promise<number> {
  const r = await autocannon({
    url,
    method: "POST",
    headers,
    body,
    connections: CONNECTIONS,
    duration: DURATION,
  });
  const errors = r.errors + r.timeouts + r.non2xx;
  if (errors > 0) throw new Error(`${errors} failed requests`);
  return r.requests.average;
}

/** `/healthz` during maximal requests and memory through hostile ones, on a server of their own. */
async function stallAndMemory(rec: Recorder): Promise<void> {
  const { child, urls } = await startChild();
  try {
    await measureStall(rec, { url: urls.mqlite, pid: child.pid!, token: TOKEN });
  } finally {
    child.kill("SIGTERM");
  }
}

export async function run(): Promise<SuiteResult> {
  const rec = new Recorder("Served broker over HTTP");
  await stallAndMemory(rec);
  const { child, urls } = await startChild();
  const send = `${urls.mqlite}/mqlite.v1.QueueService/Send`;
  const client: Broker = connect(urls.mqlite, { token: TOKEN });
  try {
    // Warm up both servers (JIT, SQLite page cache).
    await autocannon({ url: `${urls.bare}/bare`, method: "POST", body: "{}", duration: 1, connections: 8 });
    await autocannon({
      url: send,
      method: "POST",
      headers,
      body: sendBody("bench", 1),
      duration: 1,
      connections: 8,
    });

    const group = "Broker over HTTP: mqlite vs a bare endpoint of the same HTTP stack";
    const bare = (n: number): Contender => ({
      system: "bare hono endpoint",
      round: () => cannon(`${urls.bare}/bare`, sendBody("bench", n)),
    });
    await rec.compare({ group, scenario: "send 1/call, 16 connections", unit: "req/s", better: "higher" }, [
      {
        system: "mqlite",
        mode: "http",
        vs: "bare hono endpoint",
        round: () => cannon(send, sendBody("bench", 1)),
      },
      bare(1),
    ]);
    await rec.compare({ group, scenario: "send batch 64, 16 connections", unit: "req/s", better: "higher" }, [
      {
        system: "mqlite",
        mode: "http",
        vs: "bare hono endpoint",
        round: () => cannon(send, sendBody("bench", 64)),
        note: "×64 messages",
      },
      bare(64),
    ]);

    // The broker workloads through the remote client (the same code as embedded: see engine.ts).
    const bg = "Broker, embedded: mqlite vs raw better-sqlite3";
    for (const [p, c] of [
      [4, 4],
      [16, 16],
    ] as const) {
      await rec.compare(
        {
          group: bg,
          unit: "msg/s",
          better: "higher",
          scenario: `end-to-end ${p}×${c} send→receive→complete`,
        },
        [
          {
            system: "mqlite",
            mode: "http",
            vs: "raw better-sqlite3 (normal)",
            round: () => endToEnd(client, "e2e", p, c, MS),
          },
        ],
      );
    }
    await rec.compare(
      { group: bg, unit: "msg/s", better: "higher", scenario: "send 1/call, 16 callers, sync=normal" },
      [
        {
          system: "mqlite",
          mode: "http",
          vs: "raw better-sqlite3 (normal)",
          round: () => sendRate(client, "bench", 16, 1, MS),
        },
      ],
    );
    await rec.compare(
      {
        group: bg,
        unit: "publish/s",
        better: "higher",
        scenario: "fan-out to 10 subscriptions, 4 publishers",
      },
      [
        {
          system: "mqlite",
          mode: "http",
          vs: "raw better-sqlite3 (normal)",
          setup: () => fanOutTopic(client, "t", 10),
          round: () => fanOutRate(client, "t", 4, MS),
        },
      ],
    );

    // The job face over HTTP: a Queue on the remote client.
    const jobs = (round: (q: ReturnType<typeof noopQueue>) => Promise<number>): Contender => ({
      system: "mqlite",
      mode: "http",
      vs: "raw better-sqlite3 (normal)",
      round: async () => {
        const q = noopQueue({ broker: client });
        try {
          return await round(q);
        } finally {
          await q.close();
        }
      },
    });
    const jg = { group: JOB_GROUP, unit: "jobs/s", better: "higher" as const };
    await rec.compare({ ...jg, scenario: "enqueue 1/call" }, [
      jobs((q) => enqueueOne(q, Math.min(JOBS, 5000))),
    ]);
    await rec.compare({ ...jg, scenario: "enqueue batch 64" }, [jobs((q) => enqueueBatch(q, JOBS, 64))]);
    for (const c of DRAIN_CONCURRENCY) {
      await rec.compare({ ...jg, scenario: `drain ${JOBS.toLocaleString("en-US")}, concurrency ${c}` }, [
        jobs((q) => drain(q, c)),
      ]);
    }
  } finally {
    await client.close?.();
    child.kill("SIGTERM");
  }
  return rec.result;
}

if (process.argv.includes("--serve")) await serveBoth();
else if (process.argv.includes("--stall")) {
  const rec = new Recorder("Served broker over HTTP");
  await stallAndMemory(rec);
  console.log(markdownTables(rec.result.measurements));
  for (const n of rec.result.notes) console.log(`- ${n}`);
  process.exit(0);
} else await mainIfEntry(import.meta.url, run);
