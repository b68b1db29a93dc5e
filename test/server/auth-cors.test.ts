import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { tokenChecker } from "../../src/server/index.js";
import { type Served, serve, TOKEN } from "./harness.js";

const get = async (url: string, init: RequestInit = {}) => {
  const res = await fetch(url, { redirect: "manual", ...init });
  return { status: res.status, headers: res.headers, text: await res.text() };
};

describe("auth", () => {
  let s: Served;
  before(async () => {
    s = await serve({ tokens: [TOKEN, "second-token"], ui: false });
  });
  after(() => s.close());

  const list = (headers: Record<string, string>) =>
    s.post("/mqlite.v1.AdminService/ListQueues", "{}", headers);

  it("a missing token is 401 with the original's message", async () => {
    const a = await list({});
    assert.equal(a.status, 401);
    assert.equal(a.text, '{"code":"unauthenticated","message":"missing or invalid Bearer token"}\n');
  });

  it("a wrong token, or a right one with a different scheme's casing, is 401", async () => {
    for (const value of ["Bearer wrong", `Bearer ${TOKEN}x`, `bearer ${TOKEN}`, "Bearer ", ""]) {
      assert.equal((await list({ authorization: value })).status, 401, value);
    }
  });

  it("any configured token works; without the Bearer prefix the whole header is the token", async () => {
    assert.equal((await list({ authorization: `Bearer ${TOKEN}` })).status, 200);
    assert.equal((await list({ authorization: "Bearer second-token" })).status, 200);
    assert.equal((await list({ authorization: TOKEN })).status, 200);
  });

  it("/, /healthz, /ui and /ui/... are open; /uixyz, /metrics and unknown paths are not", async () => {
    assert.equal((await get(`${s.url}/`)).status, 200);
    assert.equal((await get(`${s.url}/healthz`)).status, 200);
    assert.equal((await get(`${s.url}/ui`)).status, 404, "open, and off");
    assert.equal((await get(`${s.url}/ui/x.js`)).status, 404);
    assert.equal((await get(`${s.url}/uixyz`)).status, 401);
    assert.equal((await get(`${s.url}/metrics`)).status, 401);
    assert.equal((await get(`${s.url}/openapi.json`)).status, 401);
    assert.equal((await get(`${s.url}/nowhere`)).status, 401);
    assert.equal(
      (await get(`${s.url}/mqlite.v1.QueueService/Send`)).status,
      401,
      "GET to an RPC: auth first",
    );
  });

  it("the token check compares every token (no early exit)", () => {
    const check = tokenChecker(["a", "b", "c"]);
    assert.equal(check("Bearer c"), true);
    assert.equal(check("Bearer d"), false);
    assert.equal(check(undefined), false);
    assert.equal(tokenChecker([])("Bearer a"), false);
  });

  it("with auth off every path is open and the card says none", async () => {
    const open = await serve({ tokens: [] });
    try {
      const json = { "Content-Type": "application/json" };
      assert.equal((await open.post("/mqlite.v1.AdminService/ListQueues", "{}", json)).status, 200);
      assert.equal((await get(`${open.url}/metrics`)).status, 200);
      assert.equal(JSON.parse((await get(`${open.url}/`)).text).auth, "none");
      assert.equal((await get(`${open.url}/`)).headers.get("access-control-allow-origin"), null, "no CORS");
    } finally {
      await open.close();
    }
  });
});

describe("CORS", () => {
  it("with auth on and no setting: * on every response, and a 204 preflight before auth", async () => {
    const s = await serve();
    try {
      const pre = await get(`${s.url}/mqlite.v1.QueueService/Send`, { method: "OPTIONS" });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers.get("access-control-allow-origin"), "*");
      assert.equal(pre.headers.get("access-control-allow-methods"), "GET, POST, OPTIONS");
      assert.equal(pre.headers.get("access-control-allow-headers"), "Authorization, Content-Type");
      assert.equal(pre.headers.get("access-control-max-age"), "86400");
      assert.equal(pre.text, "");
      const unauth = await get(`${s.url}/nowhere`);
      assert.equal(unauth.status, 401);
      assert.equal(unauth.headers.get("access-control-allow-origin"), "*", "error answers carry it too");
      assert.equal(unauth.headers.get("vary"), null);
      const ok = await s.post("/mqlite.v1.AdminService/ListQueues");
      assert.equal(ok.headers.get("access-control-allow-origin"), "*");
      // /mcp (ours): a browser MCP client sends and reads the session header.
      const mcp = await get(`${s.url}/mcp`, { method: "OPTIONS" });
      assert.equal(mcp.status, 204);
      assert.equal(mcp.headers.get("access-control-allow-methods"), "GET, POST, DELETE, OPTIONS");
      assert.match(
        mcp.headers.get("access-control-allow-headers") ?? "",
        /Mcp-Session-Id, Mcp-Protocol-Version/,
      );
      assert.equal(mcp.headers.get("access-control-expose-headers"), "Mcp-Session-Id");
      const rpcExpose = await s.post("/mqlite.v1.AdminService/ListQueues");
      assert.equal(rpcExpose.headers.get("access-control-expose-headers"), null);
    } finally {
      await s.close();
    }
  });

  it("a configured origin is sent verbatim with Vary: Origin, whatever the request's Origin", async () => {
    const s = await serve({ cors: "https://console.example" });
    try {
      const a = await get(`${s.url}/`, { headers: { origin: "https://elsewhere.example" } });
      assert.equal(a.headers.get("access-control-allow-origin"), "https://console.example");
      assert.match(a.headers.get("vary") ?? "", /Origin/);
      const pre = await get(`${s.url}/x`, { method: "OPTIONS" });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers.get("access-control-allow-origin"), "https://console.example");
    } finally {
      await s.close();
    }
  });

  it("off: OPTIONS goes through auth, then the POST-only check", async () => {
    const s = await serve({ cors: "off" });
    try {
      const unauth = await get(`${s.url}/mqlite.v1.QueueService/Send`, { method: "OPTIONS" });
      assert.equal(unauth.status, 401);
      assert.equal(unauth.headers.get("access-control-allow-origin"), null);
      const authed = await get(`${s.url}/mqlite.v1.QueueService/Send`, {
        method: "OPTIONS",
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      assert.equal(authed.status, 405);
    } finally {
      await s.close();
    }
  });
});
