// What the largest requests cost everyone else, for bench/http.ts: a `/healthz` probe (one request
// every 2 ms on its own connection) while maximal allowed requests are read, decoded, executed and
// answered one after another, beside the same probe with nothing else going on (the baseline, in
// the same rounds); and the server process's resident memory through a run of every hostile
// request: the allowed maxima and the attacks over the caps, each of which must be refused cheaply.
import { readFileSync } from "node:fs";
import { type ClientRequest, request } from "node:http";
import { Worker } from "node:worker_threads";
import { median, percentile, type Recorder, ROUNDS, sleep } from "./_lib.js";

/**
 * Posts a body: whole with its Content-Length, by default; "unread", declared but sent only if no
 * answer comes first (see `postUnread`); "streamed", with no Content-Length, in 64 KiB chunks.
 */
type Post = (
  path: string,
  body: string,
  how?: "unread" | "streamed",
) => Promise<{ status: number; text: string }>;

interface Load {
  name: string;
  /** Runs the load once (several requests); throws if an answer is not the expected one. */
  run: (post: Post) => Promise<void>;
  /** What the load needs first, done before the probe starts (not measured). */
  setup?: (post: Post) => Promise<void>;
}

const RPC = "/mqlite.v1.QueueService";
const BODY_2400 = Buffer.alloc(2400, 7).toString("base64");
const PROPS_24 = Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`key${i}`, `value${i}`]));

function expect(status: number, got: { status: number; text: string }, what: string): void {
  if (got.status !== status)
    throw new Error(`${what}: expected ${status}, got ${got.status}: ${got.text.slice(0, 200)}`);
}

const sendOf = (queue: string, messages: unknown[]) => JSON.stringify({ queue, messages });

/** Sends 10,000 messages of 2,400-byte bodies (a 32 MiB request) to `queue`, stored. */
const once = (make: () => string) => {
  let text: string | undefined;
  return () => (text ??= make());
};
const bigSend = once(() =>
  sendOf(
    "stall",
    Array.from({ length: 10_000 }, (_, i) => ({ body: BODY_2400, message_id: `m${i}` })),
  ),
);
const propsSend = once(() =>
  sendOf(
    "stall",
    Array.from({ length: 10_000 }, () => ({ body: "", properties: PROPS_24 })),
  ),
);

type LockRef = { seq_number: number; lock_token: string };

/** Receives every message of `queue` (256 a call); their lock references. */
async function lockAll(post: Post, queue: string): Promise<LockRef[]> {
  const locked: LockRef[] = [];
  for (;;) {
    const got = await post(`${RPC}/Receive`, JSON.stringify({ queue, max_messages: 256 }));
    expect(200, got, "Receive");
    const { messages } = JSON.parse(got.text) as { messages: LockRef[] | null };
    if (!messages?.length) return locked;
    for (const m of messages) locked.push({ seq_number: m.seq_number, lock_token: m.lock_token });
  }
}

/** Completes `locked` in CompleteBatch calls of 10,000 (kept when they carry `retain_ms`). */
async function completeAll(
  post: Post,
  queue: string,
  locked: readonly (LockRef & { retain_ms?: number })[],
): Promise<void> {
  for (let i = 0; i < locked.length; i += 10_000) {
    const got = await post(
      `${RPC}/CompleteBatch`,
      JSON.stringify({ queue, messages: locked.slice(i, i + 10_000) }),
    );
    expect(200, got, "CompleteBatch");
  }
}

/** The CompleteBatch of 10,000 alone: its messages sent and locked first, outside the probe's window. */
const completeBatchLoad = (): Load => {
  let locked: LockRef[] = [];
  return {
    name: "CompleteBatch 10,000",
    setup: async (post) => {
      expect(200, await post(`${RPC}/Send`, bigSend()), "Send");
      locked = await lockAll(post, "stall");
      if (locked.length < 10_000) throw new Error("fewer than 10,000 locked");
    },
    run: (post) => completeAll(post, "stall", locked),
  };
};

/** Forty Receives of 256 of the 2.4 KiB bodies of a maximal Send: 820 KB answers, claimed in steps. */
const receiveLoad = (): Load => ({
  name: "40 Receives of 256 × 2.4 KiB",
  setup: async (post) => expect(200, await post(`${RPC}/Send`, bigSend()), "Send"),
  run: async (post) => {
    const locked = await lockAll(post, "stall");
    if (locked.length < 10_000) throw new Error("fewer than 10,000 received");
  },
});

/** Kept completions deleted at once, as a job queue's retention or a purge does. */
const deleteSettledLoad = (): Load => ({
  name: "DeleteSettled of 20,000 kept completions",
  setup: async (post) => {
    const small = sendOf(
      "stall",
      Array.from({ length: 10_000 }, (_, i) => ({ body: "", message_id: `k${i}` })),
    );
    for (let i = 0; i < 2; i++) expect(200, await post(`${RPC}/Send`, small), "Send");
    const locked = (await lockAll(post, "stall")).map((m) => ({ ...m, retain_ms: 3_600_000 }));
    if (locked.length < 20_000) throw new Error("fewer than 20,000 locked");
    await completeAll(post, "stall", locked);
  },
  run: async (post) => {
    const got = await post(
      "/mqlite.v1.JobService/DeleteSettled",
      JSON.stringify({ queue: "stall", states: ["completed"] }),
    );
    expect(200, got, "DeleteSettled");
    const { deleted } = JSON.parse(got.text) as { deleted: number };
    if (deleted !== 20_000) throw new Error(`DeleteSettled deleted ${deleted}, not 20,000`);
  },
});

/** The maximal allowed requests: each stored or settled whole. */
export const MAXIMAL: Load[] = [
  {
    name: "Send 10,000 × 2.4 KiB bodies (32 MiB)",
    run: async (post) => {
      for (let i = 0; i < 3; i++) expect(200, await post(`${RPC}/Send`, bigSend()), "Send");
    },
  },
  {
    name: "Send 10,000 × 24 properties (240,000 entries)",
    run: async (post) => {
      for (let i = 0; i < 3; i++) expect(200, await post(`${RPC}/Send`, propsSend()), "Send");
    },
  },
  // Its Send and the forty Receives of 256 that lock its messages are measured apart: the Send
  // above, the Receives below.
  completeBatchLoad(),
  receiveLoad(),
  deleteSettledLoad(),
  {
    name: "DeleteQueue of 80,000 messages (200 MB)",
    setup: async (post) => {
      for (let i = 0; i < 8; i++) expect(200, await post(`${RPC}/Send`, bigSend()), "Send");
    },
    run: async (post) =>
      expect(
        200,
        await post("/mqlite.v1.AdminService/DeleteQueue", JSON.stringify({ name: "stall" })),
        "DeleteQueue",
      ),
  },
  {
    name: "Peek of 1 MiB messages (a 32 MiB answer)",
    run: async (post) => {
      for (let i = 0; i < 3; i++) {
        const got = await post(`${RPC}/Peek`, JSON.stringify({ queue: "large", max: 1000 }));
        expect(200, got, "Peek");
      }
    },
  },
];

/**
 * Maximal requests all at once: the server's large-body budget (32 MiB) reads one at a time and
 * the others wait their turn, so memory does not grow with their number.
 */
export const FLOOD: Load = {
  name: "8 concurrent Sends of 32 MiB",
  run: async (post) => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(`${RPC}/Send`, bigSend())));
    for (const a of answers) expect(200, a, "Send");
  },
};

/** Maximal answers all at once: eight Peeks of 32 MiB each. */
export const PEEK_FLOOD: Load = {
  name: "8 concurrent Peeks of 32 MiB answers",
  run: async (post) => {
    const body = JSON.stringify({ queue: "large", max: 1000 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(`${RPC}/Peek`, body)));
    for (const a of answers) expect(200, a, "Peek");
  },
};

const over = (n: number, item: string) => `{"queue":"stall","messages":[${`${item},`.repeat(n - 1)}${item}]}`;

/**
 * A maximal Send streamed (no Content-Length): let in as a maximal body once past 256 KiB, its
 * size found only as it arrives. Measured for memory only (its stall is the declared Send's).
 */
export const STREAMED: Load = {
  name: "Send 10,000 × 2.4 KiB bodies streamed (32 MiB, no Content-Length)",
  run: async (post) => {
    for (let i = 0; i < 3; i++) expect(200, await post(`${RPC}/Send`, bigSend(), "streamed"), "Send");
  },
};

/** The attacks over the caps: each must be refused (400/413) without the work it asks for. */
export const HOSTILE: Load[] = [
  {
    name: "CompleteBatch of 4,000,000 {} (11 MB)",
    run: async (post) =>
      expect(400, await post(`${RPC}/CompleteBatch`, over(4_000_000, "{}")), "CompleteBatch"),
  },
  {
    name: "Send of 1,000,000 {} (2.9 MB)",
    run: async (post) => expect(400, await post(`${RPC}/Send`, over(1_000_000, "{}")), "Send"),
  },
  {
    name: "JSON nested 8,000,000 levels",
    run: async (post) =>
      expect(400, await post(`${RPC}/Send`, `{"queue":"stall","messages":${"[".repeat(8_000_000)}`), "Send"),
  },
  {
    name: "2,000 messages × 1,000 properties",
    run: async (post) => {
      const props = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, "v"]));
      const body = sendOf(
        "stall",
        Array.from({ length: 2000 }, () => ({ properties: props })),
      );
      expect(400, await post(`${RPC}/Send`, body), "Send");
    },
  },
  {
    name: "a 33 MiB body",
    // The server answers from the Content-Length and closes the connection without reading the
    // body: the client's write may fail after the answer, which is the refusal working.
    run: async (post) => expect(413, await post(`${RPC}/Send`, "x".repeat(33 * 2 ** 20), "unread"), "Send"),
  },
];

/**
 * Writes `bytes` to `req` 64 KiB at a time, waiting for each drain, until `stop()` says so; then
 * `done` once every byte is written.
 */
function writeInChunks(req: ClientRequest, bytes: Buffer, stop: () => boolean, done?: () => void): void {
  const CHUNK = 64 * 1024;
  let at = 0;
  const writeMore = () => {
    while (!stop() && at < bytes.length) {
      const chunk = bytes.subarray(at, at + CHUNK);
      at += chunk.length;
      if (!req.write(chunk)) {
        req.once("drain", writeMore);
        return;
      }
    }
    if (at >= bytes.length) done?.();
  };
  writeMore();
}

/**
 * A POST declaring its whole body whose answer may come before the body is sent: the headers go
 * first, and the body only if no answer came within a second, then in chunks until one does.
 * Writing it at once raced the server's close: a write's EPIPE could reach the request before the
 * answer.
 */
function postUnread(url: string, headers: Record<string, string>, body: string) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const bytes = Buffer.from(body);
    // A connection of its own (no keep-alive agent): the server closes it after the answer.
    const req = request(url, {
      method: "POST",
      agent: false,
      headers: { ...headers, "content-length": bytes.length },
    });
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, text });
        req.destroy();
      });
      res.on("error", reject);
    });
    // A write error after the answer is the refusal working (the server closed without reading).
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    req.flushHeaders();
    setTimeout(() => writeInChunks(req, bytes, () => answered), 1000);
  });
}

/** A POST whose body goes in 64 KiB chunks with no Content-Length (chunked transfer encoding). */
function postStreamed(url: string, headers: Record<string, string>, body: string) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const bytes = Buffer.from(body);
    const req = request(url, { method: "POST", headers }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    writeInChunks(
      req,
      bytes,
      () => false,
      () => req.end(),
    );
  });
}

/** The server's resident memory, MB (Linux: /proc). */
function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/**
 * The probe, in a thread of its own so that what this process does meanwhile (building a request,
 * reading a 44 MiB answer) does not count: `/healthz` every 2 ms and the server's RSS beside it,
 * until told to stop; then its round trips (ms) and the largest RSS (MB).
 */
const PROBE = `
const { parentPort, workerData } = require("node:worker_threads");
const { readFileSync } = require("node:fs");
const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync("/proc/" + workerData.pid + "/status", "utf8"))[1]) / 1024;
let on = true;
parentPort.once("message", () => { on = false; });
(async () => {
  // One round trip first, untimed: the thread's first fetch loads the HTTP client and connects,
  // tens of milliseconds that are the probe's own start, not the server's answer.
  await (await fetch(workerData.url + "/healthz")).text();
  parentPort.postMessage("ready");
  const times = [];
  let peakMb = rss();
  while (on) {
    const started = performance.now();
    await (await fetch(workerData.url + "/healthz")).text();
    times.push(performance.now() - started);
    peakMb = Math.max(peakMb, rss());
    await new Promise((r) => setTimeout(r, 2));
  }
  parentPort.postMessage({ times, peakMb });
})();
`;

/** `/healthz` round trips (ms) and the server's largest RSS (MB) while `during` runs. */
async function probe(
  url: string,
  pid: number,
  during: () => Promise<void>,
): Promise<{ times: number[]; peakMb: number }> {
  const worker = new Worker(PROBE, { eval: true, workerData: { url, pid } });
  const failed = new Promise<never>((_, reject) => worker.once("error", reject));
  const message = () => Promise.race([new Promise<unknown>((r) => worker.once("message", r)), failed]);
  await message(); // "ready": the probe has made its first, untimed round trip
  const result = message() as Promise<{ times: number[]; peakMb: number }>;
  await sleep(50);
  try {
    await during();
  } finally {
    worker.postMessage("stop");
  }
  const out = await result;
  await worker.terminate();
  return out;
}

const IDLE = "nothing else (baseline)";

/**
 * Round by round: the idle probe, then each maximal load; then, once, every hostile request in
 * turn (the allowed maxima again, and the attacks) with the server's RSS beside its baseline.
 */
export async function measureStall(
  rec: Recorder,
  server: { url: string; pid: number; token: string },
): Promise<void> {
  const headers = { authorization: `Bearer ${server.token}`, "content-type": "application/json" };
  const post: Post = async (path, body, how) => {
    if (how === "unread") return postUnread(`${server.url}${path}`, headers, body);
    if (how === "streamed") return postStreamed(`${server.url}${path}`, headers, body);
    const res = await fetch(`${server.url}${path}`, { method: "POST", headers, body });
    return { status: res.status, text: await res.text() };
  };
  const reset = async () => {
    await post("/mqlite.v1.AdminService/DeleteQueue", JSON.stringify({ name: "stall" }));
    expect(
      200,
      await post("/mqlite.v1.AdminService/CreateQueue", JSON.stringify({ name: "stall" })),
      "CreateQueue",
    );
  };
  await reset();
  expect(
    200,
    await post("/mqlite.v1.AdminService/CreateQueue", JSON.stringify({ name: "large" })),
    "CreateQueue",
  );
  const mib = Buffer.alloc(2 ** 20 - 64, 9).toString("base64");
  for (let i = 0; i < 34; i++)
    expect(200, await post(`${RPC}/Send`, sendOf("large", [{ body: mib }])), "Send");
  // Memory first, on a server that has served nothing big yet: every hostile request once, the
  // peak RSS beside the baseline taken before them. The attacks over the caps first (each refused
  // before its work), then maximal requests all at once, then each maximal request in turn, and a
  // maximal Send streamed: a peak includes what the requests before it left behind.
  await sleep(1000);
  const baseline = rssMb(server.pid);
  const memGroup = "Server memory through every hostile request";
  let worst = 0;
  let worstAttack = 0;
  for (const load of [...HOSTILE, FLOOD, PEEK_FLOOD, ...MAXIMAL, STREAMED]) {
    const started = performance.now();
    await load.setup?.(post);
    const { times, peakMb } = await probe(server.url, server.pid, () => load.run(post));
    const ms = performance.now() - started;
    await reset();
    worst = Math.max(worst, peakMb - baseline);
    if (HOSTILE.includes(load)) worstAttack = Math.max(worstAttack, peakMb - baseline);
    rec.add({
      group: memGroup,
      scenario: load.name,
      system: "peak RSS over the baseline",
      value: peakMb - baseline,
      rounds: [peakMb - baseline],
      unit: "MB",
      better: "lower",
      note: `${ms.toFixed(0)} ms, /healthz max ${Math.max(...times).toFixed(1)} ms`,
    });
  }
  await sleep(1000);
  rec.add({
    group: memGroup,
    scenario: "after the run (1 s later)",
    system: "RSS over the baseline",
    value: rssMb(server.pid) - baseline,
    rounds: [rssMb(server.pid) - baseline],
    unit: "MB",
    better: "lower",
  });
  rec.note(
    `Server RSS baseline ${baseline.toFixed(0)} MB; the largest peak over it through the attacks over the caps: ${worstAttack.toFixed(0)} MB; through everything, maximal requests included: ${worst.toFixed(0)} MB.`,
  );

  // The memory run was the warm-up: the code paths are compiled and the pages cached.

  const figures = new Map<string, { p50: number[]; p99: number[]; max: number[] }>();
  const keep = (name: string, times: number[]) => {
    const f = figures.get(name) ?? { p50: [], p99: [], max: [] };
    f.p50.push(median(times));
    f.p99.push(percentile(times, 99));
    f.max.push(Math.max(...times));
    figures.set(name, f);
  };
  for (let r = 0; r < ROUNDS; r++) {
    keep(IDLE, (await probe(server.url, server.pid, () => sleep(2000))).times);
    for (const load of [...MAXIMAL, PEEK_FLOOD]) {
      await load.setup?.(post);
      keep(load.name, (await probe(server.url, server.pid, () => load.run(post))).times);
      await reset();
    }
  }
  const group = "/healthz while maximal requests run (server in its own process)";
  for (const stat of ["p50", "p99", "max"] as const) {
    for (const [name, f] of figures) {
      rec.add({
        group,
        scenario: `/healthz ${stat}`,
        system: name === IDLE ? IDLE : `during ${name}`,
        value: median(f[stat]),
        rounds: f[stat],
        unit: "ms",
        better: "lower",
        ...(name !== IDLE && { vs: IDLE }),
      });
    }
  }
}
