// Steady mixed load over HTTP on `mqlite serve` (a child process): producers, a fan-out publisher,
// consumers completing or abandoning, and a reader of stats and peeks, each at a fixed pace. The
// server's RSS and open file descriptors (/proc) and the WAL's size are sampled throughout; none may
// grow without bound between the second and the last quarter of the run. Latency percentiles are
// printed.
//
// Used by load.test.ts (about 25 s) and load.soak.ts (10 minutes).
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { openFds, rssBytes, type ServedChild, startServedChild } from "../support/served-child.js";
import { tempDir } from "../support/temp.js";

const TOKEN = "load-token";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface LoadOptions {
  durationMs: number;
  sampleEveryMs: number;
  log?: (line: string) => void;
}

interface Sample {
  atMs: number;
  rss: number;
  fds: number;
  walBytes: number;
  backlog: number;
}

export interface LoadReport {
  requests: number;
  errors: number;
  sent: number;
  completed: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  samples: number;
  rssMiB: [number, number];
  fds: [number, number];
  walMiB: [number, number];
  backlog: [number, number];
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const size = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

export async function runLoad(options: LoadOptions): Promise<LoadReport> {
  const log = options.log ?? (() => {});
  const tmp = tempDir("mqlite-load-");
  const db = tmp.file("mq.db");
  let server: ServedChild | undefined;
  const latencies: number[] = [];
  const errors: string[] = [];
  let requests = 0;
  let sent = 0;
  let completed = 0;
  let stop = false;
  try {
    server = await startServedChild({ db, tokens: [TOKEN], env: { MQLITE_SYNC: "NORMAL" } });
    const url = server.url;
    const call = async (rpc: string, body: unknown): Promise<any> => {
      const started = performance.now();
      const res = await fetch(`${url}/mqlite.v1.${rpc}`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      requests++;
      // Long-polls wait by design: only calls that answer at once count for latency.
      if (!(body as { wait_time_ms?: number }).wait_time_ms) latencies.push(performance.now() - started);
      if (res.status !== 200) {
        if (errors.length < 20) errors.push(`${rpc}: ${res.status} ${text.slice(0, 200)}`);
        return undefined;
      }
      return JSON.parse(text);
    };
    await call("AdminService/CreateQueue", { name: "work", config: { lock_duration_ms: 5000 } });
    for (const sub of ["fan-a", "fan-b"]) {
      await call("AdminService/Subscribe", {
        topic: "fan",
        name: sub,
        filter: { expr: 'subject != "skip"' },
      });
    }
    const body = Buffer.alloc(512, 0x61).toString("base64");

    const paced = async (everyMs: number, step: () => Promise<void>) => {
      while (!stop) {
        const started = performance.now();
        try {
          await step();
        } catch (err) {
          if (errors.length < 20) errors.push(String(err));
        }
        await sleep(Math.max(0, everyMs - (performance.now() - started)));
      }
    };
    let n = 0;
    const producer = () =>
      paced(25, async () => {
        const messages = Array.from({ length: 4 }, () => ({
          body,
          message_id: `m${++n}`,
          properties: { n: String(n), region: n % 2 ? "eu" : "us" },
        }));
        const r = await call("QueueService/Send", { queue: "work", messages });
        if (r) sent += messages.length;
      });
    const publisher = () =>
      paced(40, async () => {
        const r = await call("QueueService/Send", {
          queue: "fan",
          messages: [{ body, subject: n % 7 === 0 ? "skip" : "event", message_id: `f${++n}` }],
        });
        if (r) sent++;
      });
    const consumer = (queue: string) =>
      paced(0, async () => {
        const r = await call("QueueService/Receive", { queue, max_messages: 16, wait_time_ms: 500 });
        const msgs: { seq_number: number; lock_token: string }[] = r?.messages ?? [];
        if (msgs.length === 0) return;
        const settle = msgs.filter((_, i) => i % 10 !== 9);
        const again = msgs.filter((_, i) => i % 10 === 9);
        const done = await call("QueueService/CompleteBatch", {
          queue,
          messages: settle.map((m) => ({ seq_number: m.seq_number, lock_token: m.lock_token })),
        });
        if (done) completed += done.results.filter((x: { ok: boolean }) => x.ok).length;
        for (const m of again) {
          await call("QueueService/Abandon", { queue, seq_number: m.seq_number, lock_token: m.lock_token });
        }
      });
    const reader = () =>
      paced(200, async () => {
        await call("QueueService/Stats", { queue: "work" });
        await call("QueueService/Peek", { queue: "fan-a", max: 20 });
        await call("AdminService/ListQueues", {});
      });

    const samples: Sample[] = [];
    const started = performance.now();
    const sampler = (async () => {
      while (!stop) {
        const stats = await call("QueueService/Stats", { queue: "work" });
        const pid = server!.pid;
        samples.push({
          atMs: performance.now() - started,
          rss: rssBytes(pid) ?? 0,
          fds: openFds(pid) ?? 0,
          walBytes: size(`${db}-wal`),
          backlog: stats ? stats.active + stats.locked : 0,
        });
        const s = samples[samples.length - 1]!;
        log(
          `${(s.atMs / 1000).toFixed(0)} s: rss ${(s.rss / 2 ** 20).toFixed(1)} MiB, fds ${s.fds}, wal ${(s.walBytes / 2 ** 20).toFixed(1)} MiB, backlog ${s.backlog}`,
        );
        await sleep(options.sampleEveryMs);
      }
    })();
    const actors = [
      producer(),
      producer(),
      publisher(),
      consumer("work"),
      consumer("work"),
      consumer("fan-a"),
      consumer("fan-b"),
      reader(),
    ];
    await sleep(options.durationMs);
    stop = true;
    await Promise.all([...actors, sampler]);

    assert.deepEqual(errors, [], "every call succeeded");
    assert.ok(server.child.exitCode === null, "the server is alive");
    const q = (from: number, to: number) =>
      samples.filter(
        (s) => s.atMs >= (from * options.durationMs) / 4 && s.atMs < (to * options.durationMs) / 4,
      );
    const second = q(1, 2);
    const last = q(3, 4);
    assert.ok(second.length > 0 && last.length > 0, `too few samples (${samples.length})`);
    const max = (xs: Sample[], k: keyof Sample) => Math.max(...xs.map((s) => s[k]));
    const report: LoadReport = {
      requests,
      errors: errors.length,
      sent,
      completed,
      p50Ms: 0,
      p99Ms: 0,
      maxMs: 0,
      samples: samples.length,
      rssMiB: [max(second, "rss") / 2 ** 20, max(last, "rss") / 2 ** 20],
      fds: [max(second, "fds"), max(last, "fds")],
      walMiB: [max(second, "walBytes") / 2 ** 20, max(last, "walBytes") / 2 ** 20],
      backlog: [max(second, "backlog"), max(last, "backlog")],
    };
    const sorted = [...latencies].sort((a, b) => a - b);
    report.p50Ms = percentile(sorted, 50);
    report.p99Ms = percentile(sorted, 99);
    report.maxMs = sorted[sorted.length - 1] ?? 0;
    // Bounded growth from the second quarter (warmed up) to the last.
    const [rss2, rss4] = report.rssMiB;
    assert.ok(rss4 <= rss2 * 1.5 + 48, `RSS grew from ${rss2.toFixed(1)} to ${rss4.toFixed(1)} MiB`);
    assert.ok(
      report.fds[1] <= report.fds[0] + 16,
      `file descriptors grew from ${report.fds[0]} to ${report.fds[1]}`,
    );
    const [wal2, wal4] = report.walMiB;
    assert.ok(
      wal4 <= Math.max(wal2 * 2, 16),
      `the WAL grew from ${wal2.toFixed(1)} to ${wal4.toFixed(1)} MiB`,
    );
    assert.ok(
      report.backlog[1] <= Math.max(report.backlog[0] * 3, 2000),
      `the backlog grew from ${report.backlog[0]} to ${report.backlog[1]}: consumers fell behind`,
    );
    return report;
  } finally {
    stop = true;
    await server?.stop().catch(() => {});
    tmp.cleanup();
  }
}
