// Attacks on a served broker, each refused cheaply: oversized requests (refused while scanning,
// before any parse), a cross-site form POST and a DNS-rebinding Host against a server without auth,
// one client holding a thousand long-polls, a remote bind without auth, and readiness.
import assert from "node:assert/strict";
import { Agent, request as httpRequest } from "node:http";
import { describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { rssBytes, startServedChild } from "../support/served-child.js";
import { tempDir } from "../support/temp.js";
import { AUTH, b64, serve } from "./harness.js";

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A raw HTTP request (fetch cannot set Host), on its own connection unless an agent is given. */
function raw(
  url: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; agent?: Agent } = {},
): Promise<Raw> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: hostname,
        port,
        path,
        method: options.method ?? "POST",
        headers: options.headers ?? {},
        agent: options.agent ?? false,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

const JSON_TYPE = { "Content-Type": "application/json" };

describe("attack: one request sized to freeze the server", () => {
  it("CompleteBatch of 4M items, Send of 1M messages and JSON 8M levels deep are refused naming their cap; the server's memory stays within 100 MB; /healthz answers meanwhile", async (t) => {
    const dir = tempDir();
    // The server in its own process, so that its memory is not mixed with the client's bodies.
    const served = await startServedChild({ db: dir.file("attack.db") });
    try {
      const post = (path: string, body: string) =>
        fetch(served.url + path, { method: "POST", headers: JSON_TYPE, body }).then(async (r) => ({
          status: r.status,
          text: await r.text(),
        }));
      await post("/mqlite.v1.AdminService/CreateQueue", '{"name":"q"}');
      const attacks = [
        {
          path: "/mqlite.v1.QueueService/CompleteBatch",
          body: `{"queue":"q","messages":[${"{},".repeat(4_000_000 - 1)}{}]}`,
          cap: /more than 10000 items/,
        },
        {
          path: "/mqlite.v1.QueueService/Send",
          body: `{"queue":"q","messages":[${"{},".repeat(1_000_000 - 1)}{}]}`,
          cap: /more than 10000 items/,
        },
        {
          path: "/mqlite.v1.QueueService/Send",
          body: `{"queue":"q","messages":${"[".repeat(8_000_000)}${"]".repeat(8_000_000)}}`,
          cap: /nested deeper than 64 levels/,
        },
      ];
      const baseline = rssBytes(served.pid)!;
      let peak = baseline;
      const sampler = setInterval(() => {
        peak = Math.max(peak, rssBytes(served.pid) ?? 0);
      }, 5);
      let attacking = true;
      const healthz: number[] = [];
      const probing = (async () => {
        while (attacking) {
          const started = performance.now();
          const res = await fetch(`${served.url}/healthz`);
          await res.text();
          healthz.push(performance.now() - started);
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      try {
        for (const a of attacks) {
          const res = await post(a.path, a.body);
          assert.equal(res.status, 400, res.text);
          const body = JSON.parse(res.text);
          assert.equal(body.code, "invalid_argument");
          assert.match(body.message, a.cap);
        }
      } finally {
        attacking = false;
        await probing;
        clearInterval(sampler);
      }
      const grownMb = (peak - baseline) / 2 ** 20;
      const slowest = Math.max(...healthz);
      t.diagnostic(
        `server rss peak +${grownMb.toFixed(1)} MB; /healthz ${healthz.length} probes, slowest ${slowest.toFixed(1)} ms (loaded machine)`,
      );
      assert.ok(grownMb < 100, `the server's memory grew by ${grownMb.toFixed(1)} MB`);
      assert.ok(healthz.length > 0);
      // Generous: a refused request costs reading its body and scanning its first items; the
      // stalls these requests caused were seconds.
      assert.ok(slowest < 2000, `/healthz took ${slowest.toFixed(0)} ms`);
    } finally {
      await served.stop();
      dir.cleanup();
    }
  });

  it("the refusal comes from the scan, before any parse: text that is not even JSON past the cap is refused by the cap", async () => {
    const s = await serve();
    try {
      const broken = (prefix: string) => `${prefix}this is not JSON`;
      const cases = [
        { body: broken(`{"queue":"q","messages":[${"{},".repeat(10_000)}`), cap: /more than 10000 items/ },
        { body: broken(`{"queue":"q","messages":${"[".repeat(65)}`), cap: /nested deeper than 64/ },
        {
          body: broken(`{"queue":"q","messages":[{"properties":{${'"k":"v",'.repeat(1000)}`),
          cap: /more than 1000 keys/,
        },
      ];
      for (const c of cases) {
        const res = await s.post("/mqlite.v1.QueueService/Send", c.body, { ...AUTH, ...JSON_TYPE });
        assert.equal(res.status, 400, res.text);
        assert.match(JSON.parse(res.text).message, c.cap);
      }
    } finally {
      await s.close();
    }
  });

  it("each list has its own cap: RenewBatch 512, name lists 1,000, a whole request 250,000 entries; a Send of exactly 10,000 goes through", async () => {
    const s = await serve();
    try {
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      const refs = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ seq_number: i + 1, lock_token: "t" }));
      const renew = await s.rpc("QueueService/RenewBatch", { queue: "q", messages: refs(513) });
      assert.equal(renew.status, 400, renew.text);
      assert.match(renew.json.message, /at most 512 items/);
      const any = await s.rpc("JobService/ReceiveAny", { queues: Array.from({ length: 1001 }, () => "q") });
      assert.equal(any.status, 400, any.text);
      assert.match(any.json.message, /at most 1000 items/);
      const props = Object.fromEntries(Array.from({ length: 999 }, (_, i) => [`k${i}`, "v"]));
      const dense = await s.rpc("QueueService/Send", {
        queue: "q",
        messages: Array.from({ length: 300 }, () => ({ properties: props })),
      });
      assert.equal(dense.status, 400, dense.text);
      assert.match(dense.json.message, /more than 250000 items and keys/);
      const full = await s.rpc("QueueService/Send", {
        queue: "q",
        messages: Array.from({ length: 10_000 }, () => ({ body: b64("x") })),
      });
      assert.equal(full.status, 200, full.text);
      assert.equal(full.json.seq_numbers.length, 10_000);
      const over = await s.rpc("QueueService/Send", {
        queue: "q",
        messages: Array.from({ length: 10_001 }, () => ({})),
      });
      assert.equal(over.status, 400);
      assert.equal((await s.broker.stats("q")).active, 10_000, "the refused Send stored nothing");
    } finally {
      await s.close();
    }
  });
});

describe("attack: a web page against a broker served without auth", () => {
  it("a cross-site form POST (text/plain) to DeleteQueue is refused (403 for the Origin, 415 for the type) and the queue stays", async () => {
    const s = await serve({ tokens: [] });
    try {
      await s.post("/mqlite.v1.AdminService/CreateQueue", { name: "orders" }, JSON_TYPE);
      const form = { "Content-Type": "text/plain", Origin: "https://evil.example" };
      const crossSite = await s.post("/mqlite.v1.AdminService/DeleteQueue", '{"name":"orders"}', form);
      assert.equal(crossSite.status, 403, crossSite.text);
      assert.equal(JSON.parse(crossSite.text).code, "permission_denied");
      // Without an Origin (a client that sends none), a form type is still not an RPC.
      const plain = await s.post("/mqlite.v1.AdminService/DeleteQueue", '{"name":"orders"}', {
        "Content-Type": "application/x-www-form-urlencoded",
      });
      assert.equal(plain.status, 415, plain.text);
      assert.equal(JSON.parse(plain.text).code, "invalid_argument");
      const none = await raw(s.url, "/mqlite.v1.AdminService/DeleteQueue", { body: '{"name":"orders"}' });
      assert.equal(none.status, 415, none.text);
      assert.deepEqual(
        (await s.broker.listQueues()).map((q) => q.name),
        ["orders"],
      );
      // The server's own pages (same origin) and JSON clients still work.
      const sameOrigin = await s.post("/mqlite.v1.AdminService/ListQueues", "{}", {
        ...JSON_TYPE,
        Origin: s.url,
      });
      assert.equal(sameOrigin.status, 200, sameOrigin.text);
    } finally {
      await s.close();
    }
  });

  it("a DNS-rebinding Host is refused on RPCs, /metrics and /mcp; localhost and the bound address are served", async () => {
    const s = await serve({ tokens: [] });
    try {
      const port = new URL(s.url).port;
      const rebound = { Host: `evil.example:${port}`, ...JSON_TYPE };
      for (const path of ["/mqlite.v1.AdminService/ListQueues", "/metrics", "/mcp"]) {
        const a = await raw(s.url, path, { headers: rebound, body: "{}" });
        assert.equal(a.status, 403, `${path}: ${a.text}`);
        assert.equal(JSON.parse(a.text).code, "permission_denied");
      }
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, "localhost"]) {
        const a = await raw(s.url, "/mqlite.v1.AdminService/ListQueues", {
          headers: { Host: host, ...JSON_TYPE },
          body: "{}",
        });
        assert.equal(a.status, 200, `${host}: ${a.text}`);
      }
    } finally {
      await s.close();
    }
  });

  it("the MCP transport checks Host itself too (allowed hosts on)", async () => {
    const s = await serve({ tokens: [] });
    try {
      const port = new URL(s.url).port;
      const init = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      });
      const headers = { ...JSON_TYPE, Accept: "application/json, text/event-stream" };
      const ok = await raw(s.url, "/mcp", { headers: { ...headers, Host: `127.0.0.1:${port}` }, body: init });
      assert.equal(ok.status, 200, ok.text);
      // A loopback name on another port passes the gate (any port) but not the transport's list.
      const otherPort = await raw(s.url, "/mcp", {
        headers: { ...headers, Host: "127.0.0.1:1" },
        body: init,
      });
      assert.equal(otherPort.status, 403, otherPort.text);
      assert.match(otherPort.text, /Invalid Host header/);
    } finally {
      await s.close();
    }
  });

  it("startServer refuses a non-loopback bind without tokens unless insecureAllowRemote is set", async () => {
    const broker = await openBroker(":memory:", { background: false, logger: silentLogger });
    try {
      await assert.rejects(
        startServer({ broker, host: "0.0.0.0", port: 0, logger: silentLogger, closeBroker: false }),
        (err: Error & { code?: string }) =>
          err.code === "invalid_argument" && /insecureAllowRemote/.test(err.message),
      );
      await assert.rejects(
        startServer({ broker, host: "", port: 0, logger: silentLogger, closeBroker: false }),
        /without auth/,
      );
      const withTokens = await startServer({
        broker,
        host: "0.0.0.0",
        port: 0,
        tokens: ["t"],
        logger: silentLogger,
        closeBroker: false,
      });
      await withTokens.close();
      const insecure: RunningServer = await startServer({
        broker,
        host: "0.0.0.0",
        port: 0,
        insecureAllowRemote: true,
        logger: silentLogger,
        closeBroker: false,
      });
      await insecure.close();
    } finally {
      await broker.close();
    }
  });
});

describe("attack: one client takes every long-poll slot", () => {
  it("of 1,000 long-polls from one token, 100 park and 900 get 429 with Retry-After; another token still parks", async () => {
    const s = await serve({ tokens: ["greedy", "fair"] });
    const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
    try {
      await s.post("/mqlite.v1.AdminService/CreateQueue", { name: "q" }, { authorization: "Bearer greedy" });
      const poll = (token: string, waitMs: number) =>
        raw(s.url, "/mqlite.v1.QueueService/Receive", {
          headers: { authorization: `Bearer ${token}`, ...JSON_TYPE },
          body: JSON.stringify({ queue: "q", wait_time_ms: waitMs }),
          agent,
        });
      const statuses: number[] = [];
      const refused: Raw[] = [];
      const greedy = Array.from({ length: 1000 }, () =>
        poll("greedy", 20_000).then((a) => {
          statuses.push(a.status);
          if (a.status === 429) refused.push(a);
          return a;
        }),
      );
      // The refusals come at once; the parked ones wait for a message or their deadline.
      for (let i = 0; i < 600 && refused.length < 900; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(refused.length, 900, "refused without waiting");
      assert.equal(statuses.length, 900, "and only those answered: 100 are parked");
      for (const a of refused.slice(0, 5)) {
        assert.equal(a.headers["retry-after"], "1");
        assert.equal(JSON.parse(a.text).code, "resource_exhausted");
        assert.match(JSON.parse(a.text).message, /per-client cap/);
      }
      const fair = await poll("fair", 200);
      assert.equal(fair.status, 200, `the other client parks: ${fair.text}`);
      await s.close(); // a graceful stop answers the parked long-polls
      const answers = await Promise.all(greedy);
      assert.equal(answers.filter((a) => a.status === 200).length, 100);
    } finally {
      agent.destroy();
      await s.close();
    }
  });
});

describe("/readyz", () => {
  it("is ready, says storage_full (503) while the database is full and ready again after, and closing once the broker is closed", async () => {
    const dir = tempDir();
    const s = await serve({ closeBroker: false }, { path: dir.file("ready.db") });
    try {
      const ready = await fetch(`${s.url}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: "ready" });
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      const db = (s.broker as unknown as { db: { pragma(p: string, o?: object): unknown } }).db;
      const pages = db.pragma("page_count", { simple: true }) as number;
      db.pragma(`max_page_count = ${pages}`);
      const big = b64("x".repeat(200_000));
      const full = await s.rpc("QueueService/Send", { queue: "q", messages: [{ body: big }] });
      assert.equal(full.json.code, "storage_full", full.text);
      const open = await fetch(`${s.url}/readyz`);
      assert.equal(open.status, 503);
      assert.deepEqual(
        await open.json(),
        { status: "not_ready", reason: "storage_full" },
        "no details without a token",
      );
      const detailed = await fetch(`${s.url}/readyz`, { headers: AUTH });
      const body = (await detailed.json()) as { reason: string; message?: string };
      assert.equal(body.reason, "storage_full");
      assert.match(body.message ?? "", /full/);
      assert.equal((await fetch(`${s.url}/healthz`)).status, 200, "liveness is not readiness");
      db.pragma("max_page_count = 1073741823");
      assert.equal((await s.rpc("QueueService/Send", { queue: "q", messages: [{ body: big }] })).status, 200);
      assert.equal((await fetch(`${s.url}/readyz`)).status, 200);
      await s.broker.close();
      const closing = await fetch(`${s.url}/readyz`);
      assert.equal(closing.status, 503);
      assert.equal(((await closing.json()) as { reason: string }).reason, "closing");
    } finally {
      await s.close();
      dir.cleanup();
    }
  });
});
