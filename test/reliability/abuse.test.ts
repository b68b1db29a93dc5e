// Auth and abuse of the served broker: nothing but the open paths answers without a token (every
// route of the wire table, every method, and the other endpoints), the token check compares no token,
// request bodies and header blocks are capped, and slow clients time out without starving others.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { connect as netConnect, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { defaultConsoleDir, principalResolver } from "../../src/server/index.js";
import { MAX_REQUEST_BYTES } from "../../src/server/options.js";
import { ROUTE_NAMES, ROUTES, type RpcRoute, rpcPath } from "../../src/wire/index.js";
import { AUTH, type Served, serve, TOKEN } from "../server/harness.js";

const here = dirname(fileURLToPath(import.meta.url));
const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function status(url: string, init: RequestInit = {}): Promise<number> {
  const res = await fetch(url, { redirect: "manual", ...init });
  await res.arrayBuffer();
  return res.status;
}

/** Sends raw bytes on a new connection; resolves with what came back once the server closed it (or after `ms`). */
function raw(port: number, data: string, ms = 5000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = netConnect(port, "127.0.0.1");
    let text = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, ms);
    socket.on("data", (d) => {
      text += d.toString("latin1");
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    socket.write(data);
  });
}

describe("reliability: auth covers everything but the open paths", () => {
  let s: Served;
  before(async () => {
    s = await serve({ ui: { dir: defaultConsoleDir() } });
  });
  after(() => s.close());

  it("every route of the wire table, with every method, is 401 without a valid token", async () => {
    const bad: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong" },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: "Basic eA==" },
    ];
    for (const name of ROUTE_NAMES) {
      const path = rpcPath(ROUTES[name] as RpcRoute);
      for (const method of METHODS) {
        for (const headers of bad) {
          const init: RequestInit = { method, headers };
          if (method !== "GET" && method !== "HEAD") init.body = "{}";
          assert.equal(await status(s.url + path, init), 401, `${method} ${path} ${JSON.stringify(headers)}`);
        }
      }
    }
  });

  it("/metrics, /openapi.json, /mcp, /ui-api/events and unknown paths too; /, /healthz, /ui and /ui/... are open", async () => {
    for (const path of [
      "/metrics",
      "/openapi.json",
      "/mcp",
      "/ui-api/events",
      "/nowhere",
      "/uix",
      "/healthz/x",
      "//healthz",
    ]) {
      for (const method of METHODS) {
        const init: RequestInit = { method };
        if (method !== "GET" && method !== "HEAD") init.body = "{}";
        assert.equal(await status(s.url + path, init), 401, `${method} ${path}`);
      }
    }
    assert.equal(await status(`${s.url}/`), 200);
    assert.equal(await status(`${s.url}/healthz`), 200);
    assert.equal(await status(`${s.url}/ui`), 301);
    assert.equal(await status(`${s.url}/ui/`), 200);
    // The same paths with the token answer (so the 401s above were auth, not absence).
    assert.equal(await status(`${s.url}/metrics`, { headers: AUTH }), 200);
    assert.equal(await status(`${s.url}/openapi.json`, { headers: AUTH }), 200);
  });

  it("the token check compares no token: the presented token's SHA-256 digest is looked up, so its timing tells nothing of a configured token", () => {
    const source = readFileSync(join(here, "../../src/server/access/tokens.ts"), "utf8");
    assert.match(source, /hash\("sha256", token, "base64"\)/);
    assert.match(source, /return known\.get\(digest\(/);
    assert.doesNotMatch(source, /===\s*(spec\.)?token\b|\btoken\s*===|startsWith\(token|timingSafeEqual/);
    // The lookup by digest answers exactly the configured tokens, with or without "Bearer ".
    const resolve = principalResolver(["reader:r3ad=monitor", "w7ite"]);
    assert.equal(resolve("Bearer r3ad")?.id, "reader");
    assert.equal(resolve("r3ad")?.id, "reader");
    assert.deepEqual(resolve("Bearer w7ite")?.scopes, ["manage"]);
    for (const wrong of [
      "Bearer r3a",
      "Bearer r3add",
      "Bearer R3AD",
      "Bearer  r3ad",
      "bearer r3ad",
      "",
      undefined,
    ])
      assert.equal(resolve(wrong), undefined, `${wrong} must not resolve`);
  });
});

describe("reliability: request and header limits", () => {
  let s: Served;
  before(async () => {
    s = await serve();
  });
  after(() => s.close());

  it("a body over 32 MiB is 413 message_too_large, by Content-Length or counted as it streams", async () => {
    const big = Buffer.alloc(MAX_REQUEST_BYTES + 1, 0x20);
    const res = await fetch(`${s.url}/mqlite.v1.QueueService/Send`, {
      method: "POST",
      headers: AUTH,
      body: big,
    });
    assert.equal(res.status, 413);
    assert.equal((await res.json()).code, "message_too_large");
    // The next call of this client (on its pooled connections) goes through: the 413 closed the
    // connection whose body was left unread (it used to fail with "fetch failed").
    assert.equal((await s.rpc("AdminService/ListQueues", {})).status, 200);
    const chunks = Math.ceil((MAX_REQUEST_BYTES + 1024 * 1024) / (1024 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ >= chunks) controller.close();
        else controller.enqueue(new Uint8Array(1024 * 1024).fill(0x20));
      },
    });
    const chunked = await fetch(`${s.url}/mqlite.v1.AdminService/CreateQueue`, {
      method: "POST",
      headers: AUTH,
      body: stream,
      duplex: "half",
    } as RequestInit);
    assert.equal(chunked.status, 413);
    assert.equal((await chunked.json()).code, "message_too_large");
    assert.equal((await s.rpc("AdminService/ListQueues", {})).status, 200);
    assert.equal(await status(`${s.url}/healthz`), 200);
  });

  it("an oversized header block is 431 (or the connection closes), and the server goes on", async () => {
    const { port } = new URL(s.url);
    const huge = `POST /mqlite.v1.AdminService/ListQueues HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(100_000)}\r\n\r\n`;
    const a = await raw(Number(port), huge);
    assert.ok(a.closed || /^HTTP\/1\.1 431/.test(a.text), a.text.slice(0, 200));
    if (a.text) assert.match(a.text, /^HTTP\/1\.1 431/);
    const many = `GET /healthz HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 5000 }, (_, i) => `X-H${i}: v\r\n`).join("")}\r\n`;
    const b = await raw(Number(port), many);
    assert.ok(b.closed || /^HTTP\/1\.1 431/.test(b.text), b.text.slice(0, 200));
    assert.equal(await status(`${s.url}/healthz`), 200);
  });

  it("slow clients (headers a byte at a time) are cut after the header timeout without starving others", async () => {
    const { port } = new URL(s.url);
    const slow: { socket: Socket; closedAt?: number }[] = [];
    const opened = performance.now();
    for (let i = 0; i < 30; i++) {
      const socket = netConnect(Number(port), "127.0.0.1");
      socket.on("error", () => {});
      const entry: { socket: Socket; closedAt?: number } = { socket };
      socket.on("close", () => {
        entry.closedAt = performance.now() - opened;
      });
      socket.write("POST /mqlite.v1.AdminService/ListQueues HTTP/1.1\r\nHost: x\r\nX-Slow: ");
      slow.push(entry);
    }
    const drip = setInterval(() => {
      for (const e of slow) if (e.closedAt === undefined) e.socket.write("a");
    }, 250);
    try {
      // Meanwhile everyone else is served promptly.
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        assert.equal((await s.rpc("AdminService/ListQueues", {})).status, 200);
        assert.ok(performance.now() - started < 5000, "a normal call waited behind slow clients");
        await sleep(100);
      }
      // headersTimeout is 10 s, checked every second: every slow client is gone well before 25 s.
      for (let i = 0; i < 250 && slow.some((e) => e.closedAt === undefined); i++) await sleep(100);
      const open = slow.filter((e) => e.closedAt === undefined).length;
      assert.equal(open, 0, `${open} slow connections still open after 25 s`);
      const times = slow.map((e) => e.closedAt!);
      assert.ok(Math.min(...times) >= 9000, `cut too early (${Math.min(...times).toFixed(0)} ms)`);
    } finally {
      clearInterval(drip);
      for (const e of slow) e.socket.destroy();
    }
  });
});
