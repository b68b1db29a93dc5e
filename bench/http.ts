// HTTP benchmark: the served broker over loopback with many keep-alive connections, beside a bare
// endpoint of the same HTTP stack (hono on @hono/node-server, reading the body and answering a
// constant) measured in the same run. The server runs in a child process (one core), autocannon
// in this one (the other core).
//
// Scenarios: single-message Send; Send + Receive + Complete end to end (one cycle = 3 requests).
// Each scenario runs BENCH_ROUNDS times, interleaved, and the best round counts (the machine may be
// shared). Env: BENCH_DURATION (s, default 5), BENCH_CONNECTIONS (default 64), BENCH_ROUNDS
// (default 2), MQLITE_SYNC (default normal).
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import autocannon from "autocannon";
import { Hono } from "hono";
import { silentLogger } from "../src/engine/logger.js";
import { openBroker } from "../src/engine/open.js";
import { startServer } from "../src/server/index.js";
import { parseSyncMode } from "../src/store/sync-mode.js";
import { printTable, scratch } from "./_lib.js";

const TOKEN = "bench-token";
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const BODY = Buffer.alloc(64, "x").toString("base64");

/** Child mode: the broker (file-backed, auth on, access log off) and the bare endpoint. */
async function serveBoth(): Promise<void> {
  const dir = scratch("http");
  const broker = await openBroker(dir.file("mq.db"), {
    synchronous: parseSyncMode(process.env.MQLITE_SYNC),
    logger: silentLogger,
  });
  await broker.createQueue("bench");
  await broker.createQueue("e2e");
  const mqlite = await startServer({ broker, port: 0, tokens: [TOKEN], logger: silentLogger });
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
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--serve"], {
    stdio: ["ignore", "pipe", "inherit"],
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

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Send + Receive + Complete cycles per second (end-to-end only). */
  cycles?: number;
}

async function load(options: autocannon.Options): Promise<Measured> {
  const r = await autocannon({ connections: CONNECTIONS, duration: DURATION, ...options });
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
  };
}

const sendBody = (queue: string) => JSON.stringify({ queue, messages: [{ body: BODY }] });

/** Send, Receive, Complete on each connection in turn; a cycle counts when its Complete succeeds. */
async function endToEnd(url: string): Promise<Measured> {
  let cycles = 0;
  const m = await load({
    url,
    requests: [
      { method: "POST", path: "/mqlite.v1.QueueService/Send", headers, body: sendBody("e2e") },
      {
        method: "POST",
        path: "/mqlite.v1.QueueService/Receive",
        headers,
        body: JSON.stringify({ queue: "e2e" }),
        onResponse: (_status, body, context) => {
          const [m] = (JSON.parse(body) as { messages: { seq_number: number; lock_token: string }[] })
            .messages;
          (context as { message?: unknown }).message = m;
        },
      },
      {
        method: "POST",
        path: "/mqlite.v1.QueueService/Complete",
        headers,
        // Another connection may have taken this cycle's message: then start the next cycle.
        setupRequest: (req, context) => {
          const m = (context as { message?: unknown }).message as
            | { seq_number: number; lock_token: string }
            | undefined;
          if (!m) return undefined as never;
          return {
            ...req,
            body: JSON.stringify({ queue: "e2e", seq_number: m.seq_number, lock_token: m.lock_token }),
          };
        },
        onResponse: (status) => {
          if (status === 200) cycles++;
        },
      },
    ],
  });
  return { ...m, cycles: cycles / DURATION };
}

async function main(): Promise<void> {
  const { child, urls } = await startChild();
  try {
    // Warm up both servers (JIT, SQLite page cache).
    await autocannon({ url: `${urls.bare}/bare`, method: "POST", body: "{}", duration: 1, connections: 8 });
    await autocannon({
      url: `${urls.mqlite}/mqlite.v1.QueueService/Send`,
      method: "POST",
      headers,
      body: sendBody("bench"),
      duration: 1,
      connections: 8,
    });

    const scenarios = {
      bare: () => load({ url: `${urls.bare}/bare`, method: "POST", headers, body: sendBody("bench") }),
      send: () =>
        load({
          url: `${urls.mqlite}/mqlite.v1.QueueService/Send`,
          method: "POST",
          headers,
          body: sendBody("bench"),
        }),
      e2e: () => endToEnd(urls.mqlite),
    };
    const best: Record<keyof typeof scenarios, Measured | undefined> = {
      bare: undefined,
      send: undefined,
      e2e: undefined,
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of Object.keys(scenarios) as (keyof typeof scenarios)[]) {
        const m = await scenarios[name]();
        if (!best[name] || m.rps > best[name].rps) best[name] = m;
      }
    }
    const bare = best.bare!;
    const send = best.send!;
    const e2e = best.e2e!;
    const cyclesPerSec = e2e.cycles ?? 0;

    console.log(
      `\nloopback, ${CONNECTIONS} connections, best of ${ROUNDS} × ${DURATION} s per scenario, 64-byte bodies, ` +
        `synchronous=${parseSyncMode(process.env.MQLITE_SYNC)}, auth on, access log off`,
    );
    printTable("HTTP: served broker vs a bare hono endpoint (requests/s)", "bare endpoint", [
      { scenario: "Send, 1 message", ours: send.rps, baseline: bare.rps, unit: "req/s" },
      {
        scenario: "Send + Receive + Complete",
        ours: e2e.rps,
        baseline: bare.rps,
        unit: "req/s",
        note: `${Math.round(cyclesPerSec).toLocaleString("en-US")} cycles/s`,
      },
    ]);
    console.log("\n| scenario | p50 ms | p99 ms | errors |\n|---|--:|--:|--:|");
    for (const [name, m] of [
      ["bare endpoint", bare],
      ["Send", send],
      ["Send + Receive + Complete", e2e],
    ] as const) {
      console.log(`| ${name} | ${m.p50} | ${m.p99} | ${m.errors} |`);
    }
  } finally {
    child.kill("SIGTERM");
  }
}

if (process.argv.includes("--serve")) await serveBoth();
else await main();
