import assert from "node:assert/strict";
import { request } from "node:http";
import { describe, it } from "node:test";
import { captureLogger as capture } from "../support/capture-logger.js";
import { AUTH, serve } from "./harness.js";

// The gate every request passes (CORS → access log → stop refusal → auth) and an RPC route's own
// steps, as a client and the log see them.
describe("server gate and RPC route", () => {
  it("logs one line per request: the RPC, its status, what the handler noted, the duration", async () => {
    const logger = capture();
    const s = await serve({ logger });
    try {
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      await s.rpc("QueueService/Send", { queue: "q", messages: [{ body: "aGk=", message_id: "m1" }] });
      await s.rpc("QueueService/Receive", { queue: "empty-does-not-exist" });
      await s.post("/mqlite.v1.QueueService/Send", "{}", { authorization: "Bearer wrong" });
      await s.rpc("QueueService/Receive", { queue: "q", max_messages: 1 });
      const requests = logger.lines.filter((l) => l.msg === "request");
      const send = requests.find((l) => l.obj.rpc === "QueueService/Send" && l.obj.status === 200);
      assert.ok(send, JSON.stringify(requests));
      assert.equal(send.level, "info");
      assert.equal(send.obj.queue, "q");
      assert.equal(send.obj.n, 1);
      assert.equal(typeof send.obj.dur, "number");
      const missing = requests.find((l) => l.obj.rpc === "QueueService/Receive" && l.obj.status === 404);
      assert.equal(missing?.level, "warn");
      assert.equal(missing?.obj.code, "not_found");
      // Refused by auth before any route: logged by method and path, with the code.
      const refused = requests.find((l) => l.obj.status === 401);
      assert.deepEqual(
        [refused?.level, refused?.obj.method, refused?.obj.path, refused?.obj.code],
        ["warn", "POST", "/mqlite.v1.QueueService/Send", "unauthenticated"],
      );
      const received = requests.filter((l) => l.obj.rpc === "QueueService/Receive" && l.obj.status === 200);
      assert.equal(received.at(-1)?.obj.msgs, 1);
    } finally {
      await s.close();
    }
  });

  it("a logger that says a level is off gets no lines of it (pino's isLevelEnabled)", async () => {
    const logger = Object.assign(capture(), {
      isLevelEnabled: (level: string) => level === "warn" || level === "error",
    });
    const s = await serve({ logger });
    try {
      await s.rpc("AdminService/ListQueues");
      await s.rpc("QueueService/Receive", { queue: "missing" });
      const requests = logger.lines.filter((l) => l.msg === "request");
      assert.deepEqual(
        requests.map((l) => [l.level, l.obj.status]),
        [["warn", 404]],
      );
    } finally {
      await s.close();
    }
  });

  it("RPC answers, their errors and a body over the cap carry the CORS headers", async () => {
    const s = await serve({ cors: "https://console.example" });
    try {
      const ok = await s.post("/mqlite.v1.AdminService/ListQueues");
      assert.equal(ok.status, 200);
      assert.equal(ok.headers.get("content-type"), "application/json");
      assert.equal(ok.headers.get("access-control-allow-origin"), "https://console.example");
      assert.equal(ok.headers.get("vary"), "Origin");
      const unauth = await s.post("/mqlite.v1.AdminService/ListQueues", "{}", {});
      assert.equal(unauth.status, 401);
      assert.equal(unauth.headers.get("access-control-allow-origin"), "https://console.example");
      const bad = await s.post("/mqlite.v1.QueueService/Send", "{");
      assert.equal(bad.status, 400);
      assert.equal(bad.headers.get("access-control-allow-origin"), "https://console.example");
      const unknown = await s.post("/mqlite.v1.QueueService/Nope");
      assert.equal(unknown.status, 404);
      assert.equal(unknown.headers.get("access-control-allow-origin"), "https://console.example");
      const get = await fetch(`${s.url}/mqlite.v1.AdminService/ListQueues`, { headers: AUTH });
      assert.equal(get.status, 405);
      assert.equal(get.headers.get("access-control-allow-origin"), "https://console.example");
      // Declared over the cap: refused unread, and the connection is not reused.
      const big = await new Promise<{ status: number; headers: Record<string, unknown> }>(
        (resolve, reject) => {
          const req = request(
            new URL(`${s.url}/mqlite.v1.QueueService/Send`),
            { method: "POST", headers: { ...AUTH, "content-length": String(33 * 1024 * 1024) } },
            (res) => {
              resolve({ status: res.statusCode ?? 0, headers: res.headers });
              res.resume();
              req.destroy();
            },
          );
          req.on("error", reject);
          req.write("{");
        },
      );
      assert.equal(big.status, 413);
      assert.equal(big.headers.connection, "close");
      assert.equal(big.headers["access-control-allow-origin"], "https://console.example");
    } finally {
      await s.close();
    }
  });
});
