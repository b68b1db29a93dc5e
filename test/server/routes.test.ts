import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { b64, type Served, serve } from "./harness.js";

// Every RPC's success path, spoken as raw HTTP: the exact JSON the original's clients parse.
describe("RPC routes (raw HTTP)", () => {
  let s: Served;
  before(async () => {
    s = await serve();
  });
  after(() => s.close());

  const send = async (queue: string, body: string, extra: object = {}) =>
    (await s.rpc("QueueService/Send", { queue, messages: [{ body: b64(body), ...extra }] })).json
      .seq_numbers[0];
  const receive = async (queue: string, extra: object = {}) =>
    (await s.rpc("QueueService/Receive", { queue, ...extra })).json.messages;

  it("CreateQueue answers {} with a trailing newline and application/json", async () => {
    const a = await s.post("/mqlite.v1.AdminService/CreateQueue", {
      name: "orders",
      config: { lock_duration_ms: 5000, max_delivery_count: 3, ordering_mode: "standard" },
    });
    assert.equal(a.status, 200);
    assert.equal(a.text, "{}\n");
    assert.equal(a.headers.get("content-type"), "application/json");
  });

  it("Send answers one seq per message; an empty Send is seq_numbers null even for an unknown queue", async () => {
    const a = await s.rpc("QueueService/Send", {
      queue: "orders",
      messages: [{ body: b64("a"), message_id: "m1" }, { body: b64("b") }],
    });
    assert.equal(a.status, 200);
    assert.equal(a.json.seq_numbers.length, 2);
    assert.ok(a.json.seq_numbers.every((n: number) => n > 0));
    const empty = await s.post("/mqlite.v1.QueueService/Send", { queue: "nope", messages: [] });
    assert.equal(empty.text, '{"seq_numbers":null}\n');
    await s.rpc("QueueService/Peek", { queue: "orders" });
  });

  it("Receive returns the Receive fields only, omitting zero values; receive_mode 1 deletes", async () => {
    await s.rpc("AdminService/CreateQueue", { name: "rx" });
    const seq = await send("rx", "hello", { subject: "s", properties: { k: "v" } });
    const [m] = await receive("rx", { max_messages: 0, wait_time_ms: -5 });
    assert.deepEqual(Object.keys(m).sort(), [
      "body",
      "delivery_count",
      "enqueued_at_ms",
      "lock_token",
      "locked_until_ms",
      "properties",
      "seq_number",
      "subject",
    ]);
    assert.equal(m.seq_number, seq);
    assert.equal(Buffer.from(m.body, "base64").toString(), "hello");
    assert.match(m.lock_token, /^[0-9a-f]{32}$/);
    await s.rpc("QueueService/Complete", { queue: "rx", seq_number: seq, lock_token: m.lock_token });

    await send("rx", "gone");
    const [d] = await receive("rx", { receive_mode: 1 });
    assert.equal(d.lock_token, undefined, "receive-and-delete hands out no token");
    assert.ok(d.locked_until_ms > 0 && d.delivery_count === 1);
    assert.equal((await s.rpc("QueueService/Stats", { queue: "rx" })).json.total, 0);
  });

  it("Receive with an empty body is omitted from the message", async () => {
    await s.rpc("AdminService/CreateQueue", { name: "nobody" });
    await s.rpc("QueueService/Send", { queue: "nobody", messages: [{}] });
    const [m] = await receive("nobody");
    assert.equal(m.body, undefined);
  });

  it('Complete, Abandon, Reject, Defer, Renew answer {"ok":true}', async () => {
    await s.rpc("AdminService/CreateQueue", { name: "settle" });
    for (const [rpc, extra] of [
      ["Renew", {}],
      ["Abandon", { delay_ms: -1 }],
      ["Defer", {}],
      ["Reject", { dead_letter_reason: "Bad", dead_letter_description: "why" }],
      ["Complete", {}],
    ] as const) {
      const seq = await send("settle", rpc);
      const [m] = await receive("settle");
      const a = await s.post(`/mqlite.v1.QueueService/${rpc}`, {
        queue: "settle",
        seq_number: seq,
        lock_token: m.lock_token,
        ...extra,
      });
      assert.equal(a.text, '{"ok":true}\n', rpc);
      // Leave the queue empty for the next verb.
      const token = rpc === "Abandon" ? (await receive("settle"))[0].lock_token : m.lock_token;
      if (rpc === "Renew" || rpc === "Abandon")
        await s.rpc("QueueService/Complete", { queue: "settle", seq_number: seq, lock_token: token });
    }
    const [dead] = (await s.rpc("QueueService/Peek", { queue: "settle", state: "dead_lettered" })).json
      .messages;
    assert.equal(dead.dead_letter_reason, "Bad");
    assert.equal(dead.dead_letter_description, "why");
    assert.equal(dead.lock_token, undefined);
  });

  it("ReceiveDeferred claims deferred messages by seq and skips the others", async () => {
    await s.rpc("AdminService/CreateQueue", { name: "later" });
    const seq = await send("later", "x");
    const [m] = await receive("later");
    await s.rpc("QueueService/Defer", { queue: "later", seq_number: seq, lock_token: m.lock_token });
    const a = await s.rpc("QueueService/ReceiveDeferred", { queue: "later", seq_numbers: [seq, 999999] });
    assert.equal(a.json.messages.length, 1);
    assert.equal(a.json.messages[0].delivery_count, 2);
  });

  it("CompleteBatch and RenewBatch answer positional results", async () => {
    await s.rpc("AdminService/CreateQueue", { name: "batch", config: { lock_duration_ms: 10_000 } });
    await send("batch", "1");
    await send("batch", "2");
    const msgs = await receive("batch", { max_messages: 10 });
    const refs = msgs.map((m: any) => ({ seq_number: m.seq_number, lock_token: m.lock_token }));
    const renewed = await s.rpc("QueueService/RenewBatch", {
      queue: "batch",
      messages: [...refs, { seq_number: 1, lock_token: "stale" }],
    });
    assert.deepEqual(
      renewed.json.results.map((r: any) => r.ok),
      [true, true, false],
    );
    assert.equal(renewed.json.results[0].locked_until_ms, s.clock.now() + 10_000);
    assert.equal(renewed.json.results[2].locked_until_ms, undefined);
    const done = await s.rpc("QueueService/CompleteBatch", { queue: "batch", messages: [...refs, refs[0]] });
    assert.deepEqual(done.json, {
      results: [
        { seq_number: refs[0].seq_number, ok: true },
        { seq_number: refs[1].seq_number, ok: true },
        { seq_number: refs[0].seq_number, ok: true },
      ],
    });
    const unknown = await s.rpc("QueueService/CompleteBatch", { queue: "nope", messages: refs.slice(0, 1) });
    assert.deepEqual(unknown.json.results, [{ seq_number: refs[0].seq_number, ok: false }]);
    assert.deepEqual((await s.rpc("QueueService/CompleteBatch", { queue: "batch" })).json, { results: [] });
  });

  it("Schedule parks the message; Cancel deletes it", async () => {
    await s.rpc("AdminService/CreateQueue", { name: "sched" });
    const at = s.clock.now() + 60_000;
    const a = await s.rpc("QueueService/Schedule", {
      queue: "sched",
      messages: [{ body: b64("later") }],
      scheduled_enqueue_time_ms: at,
    });
    const [seq] = a.json.seq_numbers;
    const [m] = (await s.rpc("QueueService/Peek", { queue: "sched" })).json.messages;
    assert.equal(m.state, "scheduled");
    assert.equal(m.visible_at_ms, at);
    assert.equal(
      (await s.rpc("QueueService/Cancel", { queue: "sched", seq_number: seq })).text,
      '{"ok":true}\n',
    );
    assert.deepEqual((await s.rpc("QueueService/Peek", { queue: "sched" })).json, { messages: [] });
  });

  it("Peek shows state and times, never the lock token; an unknown queue is []", async () => {
    await s.rpc("AdminService/CreateQueue", { name: "peek", config: { default_ttl_ms: 1000 } });
    await send("peek", "p");
    await receive("peek");
    const [m] = (await s.rpc("QueueService/Peek", { queue: "peek", from_seq: 0, max: 5000 })).json.messages;
    assert.equal(m.state, "locked");
    assert.ok(m.expires_at_ms > 0 && m.visible_at_ms > 0 && m.locked_until_ms > 0);
    assert.equal(m.lock_token, undefined);
    assert.equal((await s.post("/mqlite.v1.QueueService/Peek", { queue: "nope" })).text, '{"messages":[]}\n');
    assert.deepEqual((await s.rpc("QueueService/Peek", { queue: "peek", state: "bogus" })).json, {
      messages: [],
    });
  });

  it("Stats has every field, zeros included (the original's, then ours)", async () => {
    await s.rpc("AdminService/CreateQueue", { name: "empty" });
    assert.equal(
      (await s.post("/mqlite.v1.QueueService/Stats", { queue: "empty" })).text,
      '{"queue":"empty","active":0,"locked":0,"deferred":0,"scheduled":0,"dead_lettered":0,"completed":0,"cancelled":0,"backing_off":0,"total":0,"oldest_message_age_ms":0}\n',
    );
  });

  it("Subscribe, ListSubscriptions (with kind and paused), Pause/Resume and Unsubscribe", async () => {
    assert.equal(
      (
        await s.post("/mqlite.v1.AdminService/Subscribe", {
          topic: "events",
          name: "eu",
          filter: { expr: "true" },
        })
      ).text,
      "{}\n",
    );
    await s.rpc("AdminService/Subscribe", {
      topic: "events",
      name: "all",
      config: { max_delivery_count: 2 },
    });
    const subs = (await s.rpc("AdminService/ListSubscriptions", {})).json.subscriptions;
    assert.deepEqual(
      subs.map((x: any) => [x.topic, x.name, x.expr, x.kind, x.paused]),
      [
        ["events", "all", undefined, "queue", false],
        ["events", "eu", "true", "queue", false],
      ],
    );
    const backing = (await s.rpc("AdminService/ListQueues")).json.queues.find((q: any) => q.name === "all");
    assert.equal(backing.kind, "subscription");
    assert.equal(backing.max_delivery_count, 2);
    await s.rpc("AdminService/PauseSubscription", { topic: "events", name: "eu" });
    const seqs = (await s.rpc("QueueService/Send", { queue: "events", messages: [{ body: b64("e") }] })).json
      .seq_numbers;
    assert.equal(seqs.length, 1);
    assert.equal((await s.rpc("QueueService/Stats", { queue: "eu" })).json.total, 0, "paused: no copy");
    await s.rpc("AdminService/ResumeSubscription", { topic: "events", name: "eu" });
    await s.rpc("AdminService/Unsubscribe", { topic: "events", name: "eu" });
    assert.equal((await s.rpc("AdminService/ListSubscriptions")).json.subscriptions.length, 1);
  });

  it("ListQueues is ordered by name with the original's fields and the full config", async () => {
    const { queues } = (await s.rpc("AdminService/ListQueues", "not even json")).json;
    const names = queues.map((q: any) => q.name);
    assert.deepEqual(names, [...names].sort());
    const orders = queues.find((q: any) => q.name === "orders");
    assert.deepEqual(orders, {
      name: "orders",
      kind: "queue",
      lock_duration_ms: 5000,
      max_delivery_count: 3,
      default_ttl_ms: 0,
      dedup_window_ms: 0,
      ordering_mode: "standard",
      dead_letter_on_expire: true,
      dlq_max_age_ms: 0,
      dlq_max_count: 0,
      dlq_max_bytes: 0,
    });
  });

  it("TestFilter compiles and runs a filter against a sample", async () => {
    assert.deepEqual((await s.rpc("AdminService/TestFilter", { expr: "true" })).json, {
      valid: true,
      ran: false,
      matched: false,
    });
    assert.deepEqual(
      (await s.rpc("AdminService/TestFilter", { expr: "", message: { subject: "x", body: b64("b") } })).json,
      { valid: true, ran: true, matched: true },
    );
    const bad = (await s.rpc("AdminService/TestFilter", { expr: "(((" })).json;
    assert.equal(bad.valid, false);
    assert.equal(bad.ran, false);
    assert.equal(typeof bad.error, "string");
  });

  it("Redrive and Purge move and delete dead letters", async () => {
    await s.rpc("AdminService/CreateQueue", { name: "dlq" });
    for (const body of ["1", "2", "3"]) {
      const seq = await send("dlq", body);
      const [m] = await receive("dlq");
      await s.rpc("QueueService/Reject", { queue: "dlq", seq_number: seq, lock_token: m.lock_token });
    }
    assert.deepEqual((await s.rpc("AdminService/Redrive", { queue: "dlq", max: 1 })).json, { moved: 1 });
    assert.deepEqual((await s.rpc("AdminService/Purge", { queue: "dlq" })).json, { purged: 2 });
    assert.deepEqual((await s.rpc("AdminService/Purge", { queue: "dlq" })).json, { purged: 0 });
    assert.deepEqual((await s.rpc("AdminService/Redrive", { queue: "dlq" })).json, { moved: 0 });
  });

  it("Status reports the store and whether the server checks tokens; it ignores the body", async () => {
    const st = (await s.rpc("AdminService/Status", "[not json")).json;
    assert.deepEqual(Object.keys(st), [
      "version",
      "backend",
      "remote",
      "location",
      "schema_version",
      "ping_ms",
      "db_size_bytes",
      "queues",
      "subscriptions",
      "uptime_ms",
      "auth",
      "sync",
    ]);
    assert.equal(st.backend, "memory");
    assert.equal(st.auth, true);
    assert.equal(st.remote, false);
  });

  it("DeleteQueue (our extension) removes a plain queue", async () => {
    await s.rpc("AdminService/CreateQueue", { name: "doomed" });
    assert.equal((await s.post("/mqlite.v1.AdminService/DeleteQueue", { name: "doomed" })).text, "{}\n");
    assert.equal((await s.rpc("QueueService/Stats", { queue: "doomed" })).status, 404);
  });

  it("Send accepts priority (our extension) and Receive reports it", async () => {
    await s.rpc("AdminService/CreateQueue", { name: "prio" });
    await send("prio", "low");
    await send("prio", "high", { priority: 7 });
    const [m] = await receive("prio");
    assert.equal(Buffer.from(m.body, "base64").toString(), "high");
    assert.equal(m.priority, 7);
  });

  it("output-only Message fields are accepted in Send and ignored", async () => {
    await s.rpc("AdminService/CreateQueue", { name: "echo" });
    const a = await s.rpc("QueueService/Send", {
      queue: "echo",
      messages: [{ seq_number: 5, state: "locked", lock_token: "t", delivery_count: 9, body: b64("e") }],
    });
    assert.equal(a.status, 200);
    const [m] = (await s.rpc("QueueService/Peek", { queue: "echo" })).json.messages;
    assert.equal(m.state, "active");
    assert.equal(m.delivery_count, undefined);
  });
});
