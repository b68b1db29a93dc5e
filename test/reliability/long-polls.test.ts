// Long-polls always end: at their deadline, on abort, or when the server stops; and a flood of them
// is bounded per server.
import assert from "node:assert/strict";
import { connect as netConnect } from "node:net";
import { describe, it } from "node:test";
import { connect } from "../../src/client/index.js";
import { ResourceExhaustedError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { openBroker } from "../../src/open.js";
import { AUTH, b64, serve, TOKEN } from "../server/harness.js";

const within = async <T>(ms: number, what: string, p: Promise<T>): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} still waiting after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
};

describe("reliability: long-polls end", () => {
  it("ReceiveAny with no queue and AwaitSettled with no message end at their deadline (they used to wait forever)", async () => {
    const broker = await openBroker(":memory:", { background: false, logger: silentLogger });
    try {
      assert.deepEqual(await within(3000, "receiveAny([])", broker.receiveAny([], { waitMs: 200 })), []);
      assert.deepEqual(await within(3000, "awaitSettled([])", broker.awaitSettled([], { waitMs: 200 })), []);
      const abort = new AbortController();
      const parked = broker.receiveAny([], { waitMs: 20_000, signal: abort.signal });
      setTimeout(() => abort.abort(), 100);
      assert.deepEqual(await within(3000, "an aborted receiveAny([])", parked), []);
    } finally {
      await broker.close();
    }
  });

  it("ReceiveAny over many queues with a signal adds one abort listener, not one per queue (no leak warning)", async () => {
    const broker = await openBroker(":memory:", { background: false, logger: silentLogger });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    try {
      const queues = Array.from({ length: 20 }, (_, i) => `q${i}`);
      for (const q of queues) await broker.createQueue(q);
      const abort = new AbortController();
      const parked = broker.receiveAny(queues, { waitMs: 5000, signal: abort.signal });
      await new Promise((r) => setTimeout(r, 50));
      abort.abort();
      assert.deepEqual(await within(3000, "an aborted receiveAny", parked), []);
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(
        warnings.filter((w) => w.includes("MaxListeners")),
        [],
      );
    } finally {
      process.off("warning", onWarning);
      await broker.close();
    }
  });

  it("over HTTP too: the answer is empty at the deadline", async () => {
    const s = await serve();
    try {
      const any = await within(5000, "ReceiveAny", s.rpc("JobService/ReceiveAny", { wait_time_ms: 300 }));
      assert.equal(any.status, 200);
      assert.deepEqual(any.json.messages, []);
      const settled = await within(
        5000,
        "AwaitSettled",
        s.rpc("JobService/AwaitSettled", { seq_numbers: [], wait_time_ms: 300 }),
      );
      assert.equal(settled.status, 200);
    } finally {
      await s.close();
    }
  });

  it("ReceiveAny ends at its deadline in real time, as Receive does, even when an injected clock does not move", async () => {
    const clock = new ManualClock();
    const broker = await openBroker(":memory:", { clock, background: false, logger: silentLogger });
    try {
      await broker.createQueue("q");
      const started = performance.now();
      assert.deepEqual(await within(3000, "receiveAny", broker.receiveAny(["q"], { waitMs: 150 })), []);
      assert.deepEqual(await within(3000, "receive", broker.receive("q", { waitMs: 150 })), []);
      assert.ok(performance.now() - started >= 250, "both waited");
    } finally {
      await broker.close();
    }
  });
});

describe("reliability: parked long-polls are bounded", () => {
  it("past maxLongPolls a long-poll is 429 resource_exhausted at once; short polls still work; the count goes back down", async () => {
    const s = await serve({ maxLongPolls: 3 });
    try {
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      const abort = new AbortController();
      const park = () =>
        fetch(`${s.url}/mqlite.v1.QueueService/Receive`, {
          method: "POST",
          headers: AUTH,
          body: JSON.stringify({ queue: "q", wait_time_ms: 20_000 }),
          signal: abort.signal,
        }).catch((err) => err);
      const parked = [park(), park(), park()];
      await new Promise((r) => setTimeout(r, 200));
      const started = performance.now();
      const refused = await s.post("/mqlite.v1.QueueService/Receive", { queue: "q", wait_time_ms: 20_000 });
      assert.equal(refused.status, 429, refused.text);
      assert.equal(JSON.parse(refused.text).code, "resource_exhausted");
      const any = await s.post("/mqlite.v1.JobService/ReceiveAny", { queues: ["q"], wait_time_ms: 1000 });
      assert.equal(any.status, 429);
      assert.ok(performance.now() - started < 2000, "refused at once, not parked");
      assert.equal((await s.rpc("QueueService/Receive", { queue: "q" })).status, 200, "a short poll");
      await assert.rejects(
        connect(s.url, { token: TOKEN }).receive("q", { waitMs: 1000 }),
        ResourceExhaustedError,
      );
      // A message wakes one parked long-poll: its slot is free again.
      await s.rpc("QueueService/Send", { queue: "q", messages: [{ body: b64("x") }] });
      await Promise.race(parked);
      const again = s.rpc("QueueService/Receive", { queue: "q", wait_time_ms: 300 });
      assert.equal((await again).status, 200);
      // Clients that go away free their slots too.
      abort.abort();
      await Promise.all(parked);
      for (let i = 0; i < 50; i++) {
        const a = await s.post("/mqlite.v1.QueueService/Receive", { queue: "q", wait_time_ms: 1 });
        if (a.status === 200) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const three = await Promise.all(
        [1, 2, 3].map(() => s.rpc("QueueService/Receive", { queue: "q", wait_time_ms: 100 })),
      );
      assert.deepEqual(
        three.map((a) => a.status),
        [200, 200, 200],
      );
    } finally {
      await s.close();
    }
  });

  it("one connection parks one long-poll at a time: a pipelined second one is refused, the first still answers", async () => {
    const s = await serve({ maxLongPolls: 100 });
    try {
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      const { port } = new URL(s.url);
      const body = JSON.stringify({ queue: "q", wait_time_ms: 300 });
      const request =
        `POST /mqlite.v1.QueueService/Receive HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      const socket = netConnect(Number(port), "127.0.0.1");
      let text = "";
      socket.setEncoding("utf8");
      socket.on("data", (d: string) => {
        text += d;
      });
      socket.write(request.repeat(5));
      for (let i = 0; i < 200 && (text.match(/HTTP\/1\.1 /g) ?? []).length < 5; i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      socket.destroy();
      const statuses = [...text.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1]);
      assert.equal(statuses.length, 5, text);
      assert.equal(statuses[0], "200", text);
      assert.ok(statuses.includes("429"), text);
      assert.ok(
        statuses.every((st) => st === "200" || st === "429"),
        text,
      );
    } finally {
      await s.close();
    }
  });
});
