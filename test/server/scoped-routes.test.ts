import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { connect } from "../../src/client/index.js";
import { PermissionDeniedError } from "../../src/contract/errors.js";
import { b64, type Served, serve } from "./harness.js";

// Four tokens with the four kinds of scope, each calling a route of every kind.
const TOKENS = [
  "admin:adm-secret",
  "scraper:mon-secret=monitor",
  "producer:prod-secret=send:orders.*",
  "worker:work-secret=listen:orders.*",
];
const as = (token: string) => ({ authorization: `Bearer ${token}-secret` });

describe("scoped tokens on every route", () => {
  let s: Served;
  before(async () => {
    s = await serve({ tokens: TOKENS });
    await s.broker.createQueue("orders.eu");
    await s.broker.createQueue("other");
  });
  after(() => s.close());

  const call = async (token: string, rpc: string, body: unknown = {}) => {
    const a = await s.post(`/mqlite.v1.${rpc}`, body, as(token));
    return { status: a.status, json: JSON.parse(a.text) };
  };
  const get = async (token: string | undefined, path: string) => {
    const res = await fetch(s.url + path, { headers: token ? as(token) : {} });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  /** A 403 `permission_denied` whose message names `scope`. */
  const assertDenied = (a: { status: number; json: any }, scope: string) => {
    assert.equal(a.status, 403, JSON.stringify(a.json));
    assert.equal(a.json.code, "permission_denied");
    assert.ok(a.json.message.includes(`"${scope}"`), a.json.message);
  };

  it("QueueService: send needs send:<glob> on the queue, receive and settle need listen:<glob>", async () => {
    const sent = await call("prod", "QueueService/Send", {
      queue: "orders.eu",
      messages: [{ body: b64("x") }],
    });
    assert.equal(sent.status, 200);
    assertDenied(
      await call("prod", "QueueService/Send", { queue: "other", messages: [{ body: b64("x") }] }),
      "send:other",
    );
    assertDenied(await call("prod", "QueueService/Receive", { queue: "orders.eu" }), "listen:orders.eu");
    assertDenied(await call("work", "QueueService/Receive", { queue: "other" }), "listen:other");
    assertDenied(
      await call("work", "QueueService/Send", { queue: "orders.eu", messages: [{ body: b64("x") }] }),
      "send:orders.eu",
    );
    const got = await call("work", "QueueService/Receive", { queue: "orders.eu" });
    assert.equal(got.status, 200);
    const [m] = got.json.messages;
    const settle = { queue: "orders.eu", seq_number: m.seq_number, lock_token: m.lock_token };
    assertDenied(await call("prod", "QueueService/Complete", settle), "listen:orders.eu");
    assertDenied(await call("mon", "QueueService/Peek", { queue: "orders.eu" }), "listen:orders.eu");
    assert.equal((await call("work", "QueueService/Renew", settle)).status, 200);
    assert.equal((await call("work", "QueueService/Complete", settle)).status, 200);
    assert.equal((await call("mon", "QueueService/Stats", { queue: "orders.eu" })).status, 200);
    assertDenied(await call("work", "QueueService/Stats", { queue: "orders.eu" }), "monitor");
  });

  it("AdminService: monitor reads, manage changes; nothing is changed by a refusal", async () => {
    assert.equal((await call("mon", "AdminService/ListQueues")).status, 200);
    assert.equal((await call("mon", "AdminService/Status")).status, 200);
    assertDenied(await call("prod", "AdminService/ListQueues"), "monitor");
    assertDenied(await call("mon", "AdminService/CreateQueue", { name: "made-by-monitor" }), "manage");
    assertDenied(await call("work", "AdminService/Purge", { queue: "orders.eu" }), "manage");
    assert.ok(!(await s.broker.listQueues()).some((q) => q.name === "made-by-monitor"));
    assert.equal((await call("adm", "AdminService/CreateQueue", { name: "made-by-admin" })).status, 200);
  });

  it("JobService: admin actions need manage; reads by sequence number need a scope on the message's queue", async () => {
    assertDenied(await call("mon", "JobService/PauseQueue", { name: "orders.eu" }), "manage");
    assertDenied(
      await call("work", "JobService/ReceiveAny", { queues: ["orders.eu", "other"] }),
      "listen:other",
    );
    assert.equal((await call("work", "JobService/ReceiveAny", { queues: ["orders.eu"] })).status, 200);
    const [mine] = await s.broker.send("orders.eu", [{ body: Buffer.from("p") }]);
    const [theirs] = await s.broker.send("other", [{ body: Buffer.from("q") }]);
    const read = await call("prod", "JobService/GetMessages", { seq_numbers: [mine] });
    assert.equal(read.status, 200);
    assert.equal(read.json.messages[0].seq_number, mine);
    assertDenied(
      await call("prod", "JobService/GetMessages", { seq_numbers: [mine, theirs] }),
      "listen:other",
    );
    assertDenied(await call("work", "JobService/MessageErrors", { seq_number: theirs }), "listen:other");
    assertDenied(await call("mon", "JobService/Browse", { queues: ["orders.eu"] }), "listen:orders.eu");
    assertDenied(await call("work", "JobService/Browse", {}), "listen:*");
  });

  it("TopicService: publish needs send on the topic, declaring one needs manage", async () => {
    await s.broker.subscribe("orders.new", "copies");
    assert.equal(
      (await call("prod", "TopicService/Publish", { topic: "orders.new", message: { body: b64("t") } }))
        .status,
      200,
    );
    assertDenied(
      await call("prod", "TopicService/Publish", { topic: "audit", message: { body: b64("t") } }),
      "send:audit",
    );
    assertDenied(await call("prod", "TopicService/DeclareTopic", { name: "orders.x" }), "manage");
    assertDenied(await call("work", "TopicService/ReadTopic", { topic: "audit", name: "r" }), "listen:audit");
  });

  it("/metrics and /openapi.json need monitor (or manage)", async () => {
    for (const path of ["/metrics", "/openapi.json"]) {
      assert.equal((await get("mon", path)).status, 200, path);
      assert.equal((await get("adm", path)).status, 200, path);
      const refused = await get("prod", path);
      assertDenied({ status: refused.status, json: JSON.parse(refused.text) }, "monitor");
      assert.equal((await get(undefined, path)).status, 401, path);
    }
  });

  it("the console's live feed (SSE) needs monitor", async () => {
    const refused = await get("work", "/ui-api/events");
    assertDenied({ status: refused.status, json: JSON.parse(refused.text) }, "monitor");
    const abort = new AbortController();
    const res = await fetch(`${s.url}/ui-api/events`, { headers: as("mon"), signal: abort.signal });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /event: snapshot/);
    await reader.cancel();
    abort.abort();
  });

  it("GET /auth/whoami answers the token's id and scopes, never the token", async () => {
    const who = async (token: string) => JSON.parse((await get(token, "/auth/whoami")).text);
    assert.deepEqual(await who("mon"), { auth: true, token_id: "scraper", scopes: ["monitor"] });
    assert.deepEqual(await who("adm"), { auth: true, token_id: "admin", scopes: ["manage"] });
    assert.deepEqual(await who("work"), { auth: true, token_id: "worker", scopes: ["listen:orders.*"] });
    assert.equal((await get(undefined, "/auth/whoami")).status, 401);
  });

  it("the remote client raises PermissionDeniedError", async () => {
    const broker = connect(s.url, { token: "prod-secret" });
    try {
      await assert.rejects(broker.receive("orders.eu"), (err: unknown) => {
        assert.ok(err instanceof PermissionDeniedError);
        assert.equal(err.code, "permission_denied");
        assert.match(err.message, /"listen:orders\.eu"/);
        return true;
      });
      assert.equal((await broker.send("orders.eu", [{ body: Buffer.from("ok") }])).length, 1);
    } finally {
      await broker.close();
    }
  });

  it("MCP tools check the same scopes as the RPC they mirror", async () => {
    const client = new Client({ name: "scoped", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: as("mon") } }),
    );
    try {
      const listed = await client.callTool({ name: "list_queues", arguments: {} });
      assert.equal(listed.isError, undefined);
      const refused = await client.callTool({ name: "create_queue", arguments: { name: "via-mcp" } });
      assert.equal(refused.isError, true);
      const body = JSON.parse((refused.content as { text: string }[])[0]!.text);
      assert.equal(body.code, "permission_denied");
      assert.match(body.message, /"manage"/);
      const peek = await client.callTool({ name: "peek", arguments: { queue: "orders.eu" } });
      assert.equal(JSON.parse((peek.content as { text: string }[])[0]!.text).code, "permission_denied");
      assert.ok(!(await s.broker.listQueues()).some((q) => q.name === "via-mcp"));
    } finally {
      await client.close();
    }
  });
});

describe("whoami with auth off", () => {
  it("answers full access without a token", async () => {
    const s = await serve({ tokens: [] });
    try {
      const res = await fetch(`${s.url}/auth/whoami`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { auth: false, token_id: null, scopes: ["manage"] });
    } finally {
      await s.close();
    }
  });
});
