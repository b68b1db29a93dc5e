import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { RPC_BUCKETS } from "../../src/server/index.js";
import { ROUTES, type RpcRoute, rpcPath } from "../../src/wire/index.js";
import { AUTH, b64, type Served, serve } from "./harness.js";

const ORIGINAL_ROUTES = [
  "QueueService/Send",
  "QueueService/Receive",
  "QueueService/Complete",
  "QueueService/CompleteBatch",
  "QueueService/RenewBatch",
  "QueueService/Abandon",
  "QueueService/Reject",
  "QueueService/Defer",
  "QueueService/ReceiveDeferred",
  "QueueService/Renew",
  "QueueService/Schedule",
  "QueueService/Cancel",
  "QueueService/Peek",
  "QueueService/Stats",
  "AdminService/CreateQueue",
  "AdminService/Subscribe",
  "AdminService/ListQueues",
  "AdminService/ListSubscriptions",
  "AdminService/TestFilter",
  "AdminService/Redrive",
  "AdminService/Purge",
  "AdminService/Status",
].map((r) => `/mqlite.v1.${r}`);

/** Our AdminService extensions come first after the 22; the JobService and TopicService ones follow. */
const ADMIN_EXTENSIONS = [
  "AdminService/DeleteQueue",
  "AdminService/Unsubscribe",
  "AdminService/PauseSubscription",
  "AdminService/ResumeSubscription",
].map((r) => `/mqlite.v1.${r}`);

/** Every route of the wire table, in registration order. */
const ALL_ROUTES = (Object.values(ROUTES) as RpcRoute[]).map(rpcPath);

describe("non-RPC endpoints", () => {
  let s: Served;
  let uiDir: string;
  before(async () => {
    uiDir = mkdtempSync(join(tmpdir(), "mqlite-ui-"));
    writeFileSync(join(uiDir, "index.html"), "<h1>console</h1>");
    writeFileSync(join(uiDir, "app.js"), "console.log(1)");
    s = await serve({ ui: { dir: uiDir }, version: "1.2.3" });
  });
  after(() => s.close());

  it("GET / is the discovery card with exactly the pinned fields, the 22 routes in order, then ours", async () => {
    const res = await fetch(`${s.url}/`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    const text = await res.text();
    assert.ok(text.endsWith("}\n"));
    const card = JSON.parse(text);
    assert.deepEqual(card.endpoints.slice(0, 22), ORIGINAL_ROUTES, "the original's 22, in order");
    assert.deepEqual(card.endpoints.slice(22, 26), ADMIN_EXTENSIONS);
    assert.ok(
      card.endpoints.slice(26).every((p: string) => /^\/mqlite\.v1\.(JobService|TopicService)\//.test(p)),
      "then the job face's services",
    );
    assert.deepEqual(Object.keys(card), [
      "name",
      "description",
      "version",
      "status",
      "auth",
      "docs",
      "endpoints",
      "health",
      "metrics",
      "ui",
    ]);
    assert.deepEqual(card, {
      name: "mqlite",
      description: "Lightweight SQLite-backed message queue with Azure Service Bus-style semantics.",
      version: "1.2.3",
      status: "ok",
      auth: "bearer",
      docs: "https://github.com/mqlitehq/mqlite",
      endpoints: ALL_ROUTES,
      health: "/healthz",
      metrics: "/metrics",
      ui: "/ui",
    });
    const post = await fetch(`${s.url}/`, { method: "POST" });
    assert.equal(post.status, 200, "any method");
    await post.text();
  });

  it("the card has no ui field and says auth none when both are off", async () => {
    const bare = await serve({ tokens: [], ui: false });
    try {
      const card = (await (await fetch(`${bare.url}/`)).json()) as Record<string, unknown>;
      assert.equal(card.auth, "none");
      assert.equal("ui" in card, false);
      assert.equal(Object.keys(card).length, 9);
    } finally {
      await bare.close();
    }
  });

  it("/healthz is a plain ok without a newline, open to anyone", async () => {
    const res = await fetch(`${s.url}/healthz`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain/);
    assert.equal(await res.text(), "ok");
  });

  it("/metrics is the Prometheus text of the queues, the RPC histogram and process metrics", async () => {
    await s.rpc("AdminService/CreateQueue", { name: 'we"ird' });
    await s.rpc("AdminService/CreateQueue", { name: "m" });
    await s.rpc("AdminService/Subscribe", { topic: "t", name: "m-sub" });
    await s.rpc("QueueService/Send", { queue: "m", messages: [{ body: b64("1") }, { body: b64("2") }] });
    const [msg] = (await s.rpc("QueueService/Receive", { queue: "m" })).json.messages;
    s.clock.advance(1500);
    await s.rpc("QueueService/Complete", {
      queue: "m",
      seq_number: msg.seq_number,
      lock_token: msg.lock_token,
    });
    const res = await fetch(`${s.url}/metrics`, { headers: AUTH });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    const line = (prefix: string) => text.split("\n").find((l) => l.startsWith(prefix));
    for (const state of ["active", "locked", "deferred", "scheduled", "dead_lettered"]) {
      assert.ok(line(`mqlite_queue_messages{queue="m",state="${state}"}`), state);
    }
    assert.equal(
      line('mqlite_queue_messages{queue="m",state="active"}'),
      'mqlite_queue_messages{queue="m",state="active"} 1',
    );
    assert.equal(line('mqlite_queue_total{queue="m"}'), 'mqlite_queue_total{queue="m"} 1');
    assert.equal(
      line('mqlite_queue_oldest_message_age_ms{queue="m"}'),
      'mqlite_queue_oldest_message_age_ms{queue="m"} 1500',
    );
    assert.equal(
      line('mqlite_messages_completed_total{queue="m"}'),
      'mqlite_messages_completed_total{queue="m"} 1',
    );
    assert.ok(line('mqlite_queue_total{queue="m-sub"}'), "subscription backing queues are listed");
    assert.ok(line('mqlite_queue_total{queue="we\\"ird"}'), "label values are quoted");
    assert.match(text, /# TYPE mqlite_rpc_duration_seconds histogram/);
    for (const le of [...RPC_BUCKETS.map(String), "+Inf"]) {
      assert.ok(line(`mqlite_rpc_duration_seconds_bucket{le="${le}",rpc="QueueService/Send"}`), le);
    }
    assert.ok(line('mqlite_rpc_duration_seconds_count{rpc="QueueService/Send"}'));
    assert.ok(line('mqlite_rpc_duration_seconds_sum{rpc="QueueService/Send"}'));
    assert.equal(line("mqlite_long_polls_parked "), "mqlite_long_polls_parked 0");
    assert.equal(line("mqlite_large_body_bytes "), "mqlite_large_body_bytes 0");
    assert.equal(line("mqlite_large_bodies_waiting "), "mqlite_large_bodies_waiting 0");
    assert.ok(line("process_cpu_user_seconds_total"), "process metrics");
    assert.ok(line("nodejs_heap_size_total_bytes"));
  });

  it("/metrics counts the long-polls parked on the server", async () => {
    await s.rpc("AdminService/CreateQueue", { name: "parked" });
    const waiting = s.rpc("QueueService/Receive", { queue: "parked", wait_time_ms: 5000 });
    await new Promise((r) => setTimeout(r, 100));
    const text = await (await fetch(`${s.url}/metrics`, { headers: AUTH })).text();
    assert.match(text, /^mqlite_long_polls_parked 1$/m);
    await s.rpc("QueueService/Send", { queue: "parked", messages: [{ body: b64("x") }] });
    assert.equal((await waiting).json.messages.length, 1);
    const after = await (await fetch(`${s.url}/metrics`, { headers: AUTH })).text();
    assert.match(after, /^mqlite_long_polls_parked 0$/m);
  });

  it("only registered RPCs get a latency series (no cardinality from unknown paths)", async () => {
    await s.post("/mqlite.v1.QueueService/Bogus", "{}");
    const text = await (await fetch(`${s.url}/metrics`, { headers: AUTH })).text();
    assert.equal(text.includes("Bogus"), false);
  });

  it("/metrics needs the token", async () => {
    const res = await fetch(`${s.url}/metrics`);
    assert.equal(res.status, 401);
    await res.text();
  });

  it("/openapi.json describes every route with the wire schemas", async () => {
    const res = await fetch(`${s.url}/openapi.json`, { headers: AUTH });
    assert.equal(res.status, 200);
    const doc = (await res.json()) as any;
    assert.equal(doc.openapi, "3.0.3");
    assert.deepEqual(Object.keys(doc.paths), ALL_ROUTES);
    assert.deepEqual(Object.keys(doc.paths).slice(0, 22), ORIGINAL_ROUTES);
    const send = doc.paths["/mqlite.v1.QueueService/Send"].post;
    assert.equal(
      send.requestBody.content["application/json"].schema.$ref,
      "#/components/schemas/SendRequest",
    );
    const message = doc.components.schemas.Message;
    assert.equal(message.additionalProperties, false);
    assert.equal(message.properties.seq_number.type, "integer");
    assert.equal(message.properties.body.format, "byte");
    assert.ok(doc.components.schemas.Error);
    assert.ok(doc.components.schemas.QueueConfig.properties.dlq_max_bytes);
  });

  it("/ui redirects to /ui/ and serves the console's files without a token", async () => {
    const redirect = await fetch(`${s.url}/ui`, { redirect: "manual" });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get("location"), "/ui/");
    const index = await fetch(`${s.url}/ui/`);
    assert.equal(index.status, 200);
    assert.match(index.headers.get("content-type") ?? "", /text\/html/);
    assert.equal(await index.text(), "<h1>console</h1>");
    const asset = await fetch(`${s.url}/ui/app.js`);
    assert.equal(await asset.text(), "console.log(1)");
    const missing = await fetch(`${s.url}/ui/missing.js`);
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as any).code, "not_found");
  });
});
