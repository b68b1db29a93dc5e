// The large-body budget: large request bodies read and decoded at once are bounded in bytes; the
// others wait their turn before a byte of theirs is read, in arrival order, and one that waits too
// long is refused 429 with Retry-After. Small requests never wait. A streamed body counts as a
// maximal one once past 256 KiB.
import assert from "node:assert/strict";
import { connect as netConnect, type Socket } from "node:net";
import { afterEach, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CancelledError } from "../../src/contract/errors.js";
import type { Message } from "../../src/contract/types.js";
import { ANSWER_ALLOWANCE_BYTES, AnswerRoom } from "../../src/server/answer-room.js";
import { LargeBodyBudget, LargeBodyLimitError } from "../../src/server/large-bodies.js";
import { MAX_REQUEST_BYTES } from "../../src/server/options.js";
import { AUTH, type Served, serve, TOKEN } from "./harness.js";

const SEND = "/mqlite.v1.QueueService/Send";

/** A Send of `n` messages of 1.5 KiB bodies: 200 are about 400 KB, a large body (256 KiB and up). */
function largeSend(queue: string, tag: string, n = 200): string {
  const body = Buffer.alloc(1536, tag.charCodeAt(0)).toString("base64");
  return JSON.stringify({
    queue,
    messages: Array.from({ length: n }, (_, i) => ({ body, message_id: `${tag}${i}` })),
  });
}

interface Answer {
  status: number;
  /** The answer's head (status line and headers) and body. */
  head: string;
  text: string;
}

interface Held {
  /** Sends the rest of the body; resolves with the answer. */
  finish(): Promise<Answer>;
  /** The answer, without sending more of the body. */
  answered: Promise<Answer>;
  /** Resolves once the connection has closed. */
  closed: Promise<void>;
  socket: Socket;
}

/** A request whose headers and first KiB are sent, the rest held back until `finish`. */
function holdRequest(url: string, body: string, chunked = false, path = SEND): Promise<Held> {
  const { port } = new URL(url);
  const bytes = Buffer.from(body);
  return new Promise((resolve, reject) => {
    const socket = netConnect(Number(port), "127.0.0.1");
    let text = "";
    let answer!: (a: Answer) => void;
    const answered = new Promise<Answer>((r) => {
      answer = r;
    });
    const closed = new Promise<void>((r) => socket.once("close", () => r()));
    socket.on("data", (d) => {
      text += d.toString("latin1");
      const status = /^HTTP\/1\.1 (\d+)/.exec(text);
      const split = text.indexOf("\r\n\r\n");
      if (status && split !== -1 && /}\n?$/.test(text))
        answer({ status: Number(status[1]), head: text.slice(0, split), text: text.slice(split + 4) });
    });
    socket.on("error", reject);
    socket.on("connect", () => {
      const head = [
        `POST ${path} HTTP/1.1`,
        `Host: 127.0.0.1:${port}`,
        `Authorization: Bearer ${TOKEN}`,
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${bytes.length}`,
      ].join("\r\n");
      const chunk = (b: Buffer) =>
        chunked ? Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from("\r\n")]) : b;
      // Chunked: the first part goes past 256 KiB, so the body is large before it ends.
      const cut = chunked ? 300 * 1024 : 1024;
      socket.write(Buffer.concat([Buffer.from(`${head}\r\n\r\n`), chunk(bytes.subarray(0, cut))]));
      resolve({
        socket,
        answered,
        closed,
        finish: () => {
          socket.write(chunk(bytes.subarray(cut)));
          if (chunked) socket.write("0\r\n\r\n");
          return answered;
        },
      });
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An MCP initialize whose client name makes the body about 300 KB (a large body). */
const largeInitialize = () =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-03-26",
      capabilities: {},
      clientInfo: { name: "x".repeat(300_000), version: "1.0.0" },
    },
  });

/** Posts a large Send (see `largeSend`) to `s`, whole. */
const postLarge = (s: Served, tag: string) =>
  s.post(SEND, largeSend("q", tag), { ...AUTH, "content-type": "application/json" });

/** Posts a Send whose body is `stream` (chunked: no Content-Length) to `s`. */
const sendStreamed = (s: Served, stream: ReadableStream<Uint8Array>) =>
  fetch(`${s.url}${SEND}`, {
    method: "POST",
    headers: { ...AUTH, "content-type": "application/json" },
    body: stream,
    duplex: "half",
  } as RequestInit);

async function activeCount(s: Served, queue: string): Promise<number> {
  const stats = await s.rpc("QueueService/Stats", { queue });
  assert.equal(stats.status, 200, stats.text);
  return Number(stats.json.active);
}

describe("LargeBodyBudget", () => {
  it("gives room in arrival order, each once, and never lets a later body overtake", async () => {
    const budget = new LargeBodyBudget(100, 10_000);
    const first = await budget.take(60);
    const order: string[] = [];
    const inTurn = (name: string, taken: Promise<() => void>) =>
      taken.then((release) => {
        order.push(name);
        return release;
      });
    const big = inTurn("big", budget.take(60));
    const small = inTurn("small", budget.take(10));
    await sleep(10);
    // 10 bytes would fit beside the first body, but the 60 ahead of them wait first.
    assert.deepEqual(order, []);
    assert.equal(budget.queued, 2);
    first();
    first();
    const [releaseBig, releaseSmall] = await Promise.all([big, small]);
    assert.deepEqual(order, ["big", "small"]);
    assert.equal(budget.inUse, 70);
    releaseBig();
    releaseSmall();
    assert.equal(budget.inUse, 0);
  });

  it("gives a body holding room the grace plus its size at the slowest rate to arrive", () => {
    const budget = new LargeBodyBudget(1000, 100, 2 ** 20, 5000);
    assert.equal(budget.arrivalMs(0), 5000);
    assert.equal(budget.arrivalMs(2 ** 20), 6000);
    assert.equal(budget.arrivalMs(MAX_REQUEST_BYTES), 5000 + 32_000);
    // Not a positive rate: no bound (the longest a timer waits).
    assert.equal(new LargeBodyBudget(1000, 100, 0, 5000).arrivalMs(2 ** 20), 2 ** 31 - 1);
  });

  it("refuses after the wait, and counts a body larger than the budget as the whole of it", async () => {
    const budget = new LargeBodyBudget(100, 30);
    const whole = await budget.take(1_000);
    assert.equal(budget.inUse, 100);
    await assert.rejects(budget.take(1), LargeBodyLimitError);
    assert.equal(budget.queued, 0);
    whole();
    (await budget.take(100))();
  });

  it("a waiter whose client left gives its place up, and those behind it move on", async () => {
    const budget = new LargeBodyBudget(100, 10_000);
    const first = await budget.take(50);
    const controller = new AbortController();
    const leaving = budget.take(80, controller.signal);
    const behind = budget.take(40);
    controller.abort();
    await assert.rejects(leaving, CancelledError);
    // The 80 bytes that did not fit are gone from the line: the 40 behind them fit now.
    (await behind)();
    first();
    assert.equal(budget.inUse, 0);
    assert.equal(budget.queued, 0);
  });
});

/** A message of `n` body bytes, as an answer counts it. */
const sized = (n: number) => ({ body: Buffer.alloc(n) }) as Message;

describe("AnswerRoom", () => {
  it("takes what is free beyond the allowance, keeps what its messages took, and gives all back", () => {
    const budget = new LargeBodyBudget(1_000_000, 10_000);
    const a = new AnswerRoom(budget);
    assert.equal(a.reserve(), ANSWER_ALLOWANCE_BYTES + 1_000_000);
    assert.equal(budget.inUse, 1_000_000);
    const b = new AnswerRoom(budget);
    assert.equal(b.reserve(), ANSWER_ALLOWANCE_BYTES, "nothing free: the allowance alone");
    a.keep([sized(ANSWER_ALLOWANCE_BYTES), sized(300_000)]);
    assert.equal(budget.inUse, 300_000, "the rest of its room is given back");
    // One message larger than its room is sent whole, and counted.
    b.keep([sized(ANSWER_ALLOWANCE_BYTES + 800_000)]);
    assert.equal(budget.inUse, 1_100_000);
    a.release();
    b.release();
    b.release();
    assert.equal(budget.inUse, 0);
    assert.equal(a.reserve(), ANSWER_ALLOWANCE_BYTES, "a released room takes nothing more");
    assert.equal(budget.inUse, 0);
  });

  it("asked again, gives back what it took first; a request's own max_bytes takes no more than it needs", () => {
    const budget = new LargeBodyBudget(1_000_000, 10_000);
    const room = new AnswerRoom(budget);
    room.reserve();
    assert.equal(room.reserve(), ANSWER_ALLOWANCE_BYTES + 1_000_000);
    assert.equal(budget.inUse, 1_000_000);
    assert.equal(room.reserve(1000), 1000);
    assert.equal(budget.inUse, 0);
    assert.equal(room.reserve(ANSWER_ALLOWANCE_BYTES + 10), ANSWER_ALLOWANCE_BYTES + 10);
    assert.equal(budget.inUse, 10);
    room.release();
    assert.equal(budget.inUse, 0);
  });

  it("takes nothing while a body waits its turn, which an answer never overtakes", async () => {
    const budget = new LargeBodyBudget(1_000_000, 10_000);
    const first = await budget.take(600_000);
    const waiting = budget.take(600_000);
    const room = new AnswerRoom(budget);
    assert.equal(room.reserve(), ANSWER_ALLOWANCE_BYTES);
    first();
    (await waiting)();
    assert.equal(budget.inUse, 0);
  });
});

describe("large bodies over HTTP", () => {
  let s: Served | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it("a large body beyond the budget waits, is refused 429 with Retry-After after the wait, and stores nothing", async () => {
    s = await serve({ maxLargeBodyBytes: 500_000, largeBodyWaitMs: 300 });
    assert.equal((await s.rpc("AdminService/CreateQueue", { name: "q" })).status, 200);
    const held = await holdRequest(s.url, largeSend("q", "a"));
    await sleep(50);

    const refused = await postLarge(s, "b");
    assert.equal(refused.status, 429, refused.text);
    assert.equal(JSON.parse(refused.text).code, "resource_exhausted");
    assert.equal(refused.headers.get("retry-after"), "1");
    assert.equal(refused.headers.get("connection"), "close");
    // Small requests never wait for the budget.
    const small = await s.rpc("QueueService/Send", { queue: "q", messages: [{ body: "" }] });
    assert.equal(small.status, 200, small.text);

    const answer = await held.finish();
    held.socket.destroy();
    assert.equal(answer.status, 200, answer.text);
    assert.equal(await activeCount(s, "q"), 201);
    // The room was given back: the next large body is let in at once.
    const again = await postLarge(s, "c");
    assert.equal(again.status, 200, again.text);
    assert.equal(await activeCount(s, "q"), 401);
  });

  it("waiting bodies are let in in arrival order once room is given back", async () => {
    s = await serve({ maxLargeBodyBytes: 500_000, largeBodyWaitMs: 10_000 });
    assert.equal((await s.rpc("AdminService/CreateQueue", { name: "q" })).status, 200);
    const held = await holdRequest(s.url, largeSend("q", "a"));
    await sleep(50);
    const b = postLarge(s, "b");
    await sleep(50);
    const c = postLarge(s, "c");
    await sleep(50);
    assert.equal(await activeCount(s, "q"), 0);
    // The held body's bytes are in use, the two others wait: /metrics says so.
    const metrics = await (await fetch(`${s.url}/metrics`, { headers: AUTH })).text();
    const gauge = (name: string) => metrics.split("\n").find((l) => l.startsWith(`${name} `));
    assert.equal(
      gauge("mqlite_large_body_bytes"),
      `mqlite_large_body_bytes ${Buffer.byteLength(largeSend("q", "a"))}`,
    );
    assert.equal(gauge("mqlite_large_bodies_waiting"), "mqlite_large_bodies_waiting 2");

    assert.equal((await held.finish()).status, 200);
    held.socket.destroy();
    const [answerB, answerC] = await Promise.all([b, c]);
    assert.equal(answerB.status, 200, answerB.text);
    assert.equal(answerC.status, 200, answerC.text);
    const seqs = (a: { text: string }) => (JSON.parse(a.text).seq_numbers as number[]).map(Number);
    assert.ok(Math.max(...seqs(answerB)) < Math.min(...seqs(answerC)), "b was let in before c");
    assert.equal(await activeCount(s, "q"), 600);
    const after = await (await fetch(`${s.url}/metrics`, { headers: AUTH })).text();
    assert.match(after, /^mqlite_large_body_bytes 0$/m);
    assert.match(after, /^mqlite_large_bodies_waiting 0$/m);
  });

  it("a waiting body whose client goes away leaves the line", async () => {
    s = await serve({ maxLargeBodyBytes: 500_000, largeBodyWaitMs: 10_000 });
    assert.equal((await s.rpc("AdminService/CreateQueue", { name: "q" })).status, 200);
    const held = await holdRequest(s.url, largeSend("q", "a"));
    await sleep(50);
    const leaving = await holdRequest(s.url, largeSend("q", "b"));
    await sleep(50);
    const gauge = async (name: string) => {
      const text = await (await fetch(`${s!.url}/metrics`, { headers: AUTH })).text();
      return text.split("\n").find((l) => l.startsWith(`${name} `));
    };
    assert.equal(await gauge("mqlite_large_bodies_waiting"), "mqlite_large_bodies_waiting 1");
    leaving.socket.destroy();
    await sleep(100);
    assert.equal(await gauge("mqlite_large_bodies_waiting"), "mqlite_large_bodies_waiting 0");
    assert.equal((await held.finish()).status, 200);
    held.socket.destroy();
    assert.equal(await gauge("mqlite_large_body_bytes"), "mqlite_large_body_bytes 0");
    assert.equal(await activeCount(s, "q"), 200);
  });

  it("an MCP request with a large body takes its room too", async () => {
    s = await serve({ maxLargeBodyBytes: 500_000, largeBodyWaitMs: 300 });
    assert.equal((await s.rpc("AdminService/CreateQueue", { name: "q" })).status, 200);
    const initialize = largeInitialize();
    const mcp = () =>
      fetch(`${s!.url}/mcp`, {
        method: "POST",
        headers: {
          ...AUTH,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: initialize,
      });
    const held = await holdRequest(s.url, largeSend("q", "a"));
    await sleep(50);
    const refused = await mcp();
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get("retry-after"), "1");
    assert.match((await refused.json()).error.message, /large request bodies/);

    assert.equal((await held.finish()).status, 200);
    held.socket.destroy();
    const answered = await mcp();
    assert.equal(answered.status, 200);
    assert.equal((await answered.json()).result.serverInfo.name, "mqlite");
  });

  it("an answer that lists messages is cut to its room: the allowance alone while large bodies fill the budget", async () => {
    s = await serve({ maxLargeBodyBytes: 1_000_000, largeBodyWaitMs: 10_000 });
    await s.broker.createQueue("big");
    await s.broker.send(
      "big",
      Array.from({ length: 8 }, () => ({ body: Buffer.alloc(300_000, 1) })),
    );
    await s.broker.createQueue("set-aside");
    await s.broker.send(
      "set-aside",
      Array.from({ length: 4 }, () => ({ body: Buffer.alloc(300_000, 3) })),
    );
    const setAside = await s.broker.receive("set-aside", { maxMessages: 4 });
    for (const m of setAside) await s.broker.defer("set-aside", m.seqNumber, m.lockToken!);
    await s.broker.subscribeLog("log", "reader");
    for (let i = 0; i < 8; i++) await s.broker.publish("log", { body: Buffer.alloc(300_000, 2) });
    const count = async (route: string, req: object) => {
      const got = await s!.rpc(route, req);
      assert.equal(got.status, 200, got.text);
      return (got.json.messages as unknown[]).length;
    };
    const peek = (req: object = {}) => count("QueueService/Peek", { queue: "big", max: 1000, ...req });
    const agent = new Client({ name: "answer-rooms", version: "1.0.0" });
    await agent.connect(
      new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: AUTH } }),
    );
    const mcpPeek = async () => {
      const got = await agent.callTool({ name: "peek", arguments: { queue: "big", max: 1000 } });
      return JSON.parse((got.content as { text: string }[])[0]!.text).messages.length as number;
    };
    // The allowance and the whole budget: 1,262,144 bytes, which the fifth message crosses.
    assert.equal(await peek(), 5);
    assert.equal(await mcpPeek(), 5, "an MCP tool's read takes a room too");
    assert.equal(await peek({ max_bytes: 500_000 }), 2, "the request's own max_bytes");

    const held = await holdRequest(s.url, largeSend("q", "a", 600));
    await sleep(50);
    assert.equal(await peek(), 1, "the allowance alone: the message that crosses it");
    assert.equal(await count("QueueService/Receive", { queue: "big", max_messages: 8 }), 1);
    assert.equal(await count("JobService/ReceiveAny", { queues: ["big"], max_messages: 8 }), 1);
    assert.equal(await mcpPeek(), 1);
    const mcpDeferred = await agent.callTool({
      name: "receive_deferred",
      arguments: { queue: "set-aside", seq_numbers: setAside.map((m) => m.seqNumber) },
    });
    const taken = JSON.parse((mcpDeferred.content as { text: string }[])[0]!.text).messages;
    assert.equal(taken.length, 1, "the MCP receive_deferred tool's too");
    await agent.close();
    const log = { topic: "log", name: "reader" };
    assert.equal(await count("TopicService/ReadTopic", log), 1);
    assert.equal(await count("TopicService/LeaseTopic", { ...log, visibility_ms: 60_000 }), 1);
    // The one the MCP tool took is locked now: the RPC takes the next.
    const deferred = { queue: "set-aside", seq_numbers: setAside.map((m) => m.seqNumber) };
    assert.equal(await count("QueueService/ReceiveDeferred", deferred), 1);

    held.socket.destroy();
    await sleep(100);
    const gauge = async () => {
      const text = await (await fetch(`${s!.url}/metrics`, { headers: AUTH })).text();
      return text.split("\n").find((l) => l.startsWith("mqlite_large_body_bytes "));
    };
    assert.equal(await gauge(), "mqlite_large_body_bytes 0", "every answer gave its room back");
    assert.equal(await count("QueueService/Receive", { queue: "big", max_messages: 8 }), 5);
    assert.equal(await count("TopicService/ReadTopic", log), 5);
  });

  it("a small streamed body is read as it comes and never waits for room", async () => {
    s = await serve({ maxLargeBodyBytes: 500_000, largeBodyWaitMs: 300 });
    assert.equal((await s.rpc("AdminService/CreateQueue", { name: "q" })).status, 200);
    const held = await holdRequest(s.url, largeSend("q", "a"));
    await sleep(50);
    const text = JSON.stringify({
      queue: "q",
      messages: [{ body: Buffer.from("chunked").toString("base64") }],
    });
    const parts = [text.slice(0, 10), text.slice(10)];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = parts.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    const res = await sendStreamed(s, stream);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal((await res.json()).seq_numbers.length, 1);
    assert.equal((await held.finish()).status, 200);
    held.socket.destroy();
    assert.equal(await activeCount(s, "q"), 201);
  });

  // 64 MiB/s after 200 ms: a 400 KB body has 206 ms once let in, a streamed one 700 ms.
  const tight = { largeBodyGraceMs: 200, largeBodyMinBytesPerSecond: 64 * 2 ** 20 };

  for (const chunked of [false, true]) {
    it(`a large ${chunked ? "streamed " : ""}body that stops arriving is refused 429 and gives its room back`, {
      timeout: 10_000,
    }, async () => {
      s = await serve({ maxLargeBodyBytes: MAX_REQUEST_BYTES + 500_000, largeBodyWaitMs: 10_000, ...tight });
      assert.equal((await s.rpc("AdminService/CreateQueue", { name: "q" })).status, 200);
      const started = performance.now();
      const stalled = await holdRequest(s.url, largeSend("q", "a"), chunked);
      const answer = await stalled.answered;
      const ms = performance.now() - started;
      assert.equal(answer.status, 429, answer.text);
      assert.equal(JSON.parse(answer.text).code, "resource_exhausted");
      assert.match(answer.head, /^retry-after: 1$/im);
      assert.match(answer.head, /^connection: close$/im);
      assert.ok(ms >= 200, `refused after ${ms} ms, before its time`);
      await stalled.closed;
      assert.equal(await activeCount(s, "q"), 0);
      const metrics = await (await fetch(`${s.url}/metrics`, { headers: AUTH })).text();
      assert.match(metrics, /^mqlite_large_body_bytes 0$/m);
      // A body that arrives at once is let in as usual.
      const whole = await postLarge(s, "b");
      assert.equal(whole.status, 200, whole.text);
      assert.equal(await activeCount(s, "q"), 200);
    });
  }

  it("an MCP request whose large body stops arriving is cut off and gives its room back", {
    timeout: 10_000,
  }, async () => {
    s = await serve({ maxLargeBodyBytes: 500_000, largeBodyWaitMs: 10_000, ...tight });
    const initialize = largeInitialize();
    const stalled = await holdRequest(s.url, initialize, false, "/mcp");
    await stalled.closed;
    const metrics = await (await fetch(`${s.url}/metrics`, { headers: AUTH })).text();
    assert.match(metrics, /^mqlite_large_body_bytes 0$/m);
  });

  it("a large streamed body in uneven chunks is stored byte for byte", async () => {
    s = await serve();
    assert.equal((await s.rpc("AdminService/CreateQueue", { name: "q" })).status, 200);
    // 1,000 distinct bodies: about 6 MiB of JSON, read before and after the body is let in.
    const bodies = Array.from({ length: 1000 }, (_, i) => Buffer.alloc(4600, `${i}:`).toString("base64"));
    const bytes = Buffer.from(JSON.stringify({ queue: "q", messages: bodies.map((body) => ({ body })) }));
    const sizes = [1, 7_001, 65_539, 300_007, 13];
    let at = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        const size = sizes[((at / 7) % sizes.length) | 0]!;
        controller.enqueue(bytes.subarray(at, at + size));
        at += size;
      },
    });
    const res = await sendStreamed(s, stream);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal((await res.json()).seq_numbers.length, 1000);
    const peek = await s.rpc("QueueService/Peek", { queue: "q", max: 1000 });
    assert.equal(peek.status, 200, peek.text.slice(0, 200));
    const stored = (peek.json.messages as { body: string }[]).map((m) => m.body);
    assert.equal(stored.length, 1000);
    assert.equal(
      stored.findIndex((b, i) => b !== bodies[i]),
      -1,
      "the first message whose body differs",
    );
  });

  it("a streamed body takes room for a maximal body once past 256 KiB", async () => {
    // Room for one maximal body and a little: a streamed body past 256 KiB leaves too little for 400 KB.
    s = await serve({ maxLargeBodyBytes: MAX_REQUEST_BYTES + 100_000, largeBodyWaitMs: 300 });
    assert.equal((await s.rpc("AdminService/CreateQueue", { name: "q" })).status, 200);
    const streamed = await holdRequest(s.url, largeSend("q", "a"), true);
    await sleep(50);
    const refused = await postLarge(s, "b");
    assert.equal(refused.status, 429, refused.text);

    const answer = await streamed.finish();
    streamed.socket.destroy();
    assert.equal(answer.status, 200, answer.text);
    assert.equal(await activeCount(s, "q"), 200);
    const again = await postLarge(s, "c");
    assert.equal(again.status, 200, again.text);
  });
});
