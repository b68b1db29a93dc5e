import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { b64, type Served, serve } from "./harness.js";

// Go's encoding/json matches a request's keys to fields case-insensitively, and the later of two
// keys naming one field wins; the original's clients (and hand-written scripts) rely on it.
describe("wire: request keys match field names case-insensitively", () => {
  let s: Served;
  before(async () => {
    s = await serve();
  });
  after(() => s.close());

  it("at every level: request, config, messages, nested filter", async () => {
    assert.equal(
      (
        await s.rpc("AdminService/CreateQueue", {
          Name: "q",
          CONFIG: { Lock_Duration_MS: 5000, max_delivery_COUNT: 3 },
        })
      ).status,
      200,
    );
    const [info] = (await s.rpc("AdminService/ListQueues")).json.queues;
    assert.deepEqual([info.name, info.lock_duration_ms, info.max_delivery_count], ["q", 5000, 3]);
    const sent = await s.rpc("QueueService/Send", {
      Queue: "q",
      Messages: [{ Body: b64("hi"), Message_ID: "m1", Properties: { Keep: "Case" } }],
    });
    assert.equal(sent.status, 200, sent.text);
    const [m] = (await s.rpc("QueueService/Receive", { QUEUE: "q", Max_Messages: 1 })).json.messages;
    assert.equal(m.message_id, "m1");
    assert.deepEqual(m.properties, { Keep: "Case" }, "property names are data: never folded");
    const done = await s.rpc("QueueService/Complete", {
      Queue: "q",
      Seq_Number: m.seq_number,
      Lock_Token: m.lock_token,
    });
    assert.deepEqual(done.json, { ok: true });
    await s.rpc("AdminService/Subscribe", { Topic: "t", Name: "s", Filter: { Expr: "subject == 'x'" } });
    const [sub] = (await s.rpc("AdminService/ListSubscriptions")).json.subscriptions;
    assert.equal(sub.expr, "subject == 'x'");
  });

  it("the later of two keys for one field wins, whichever spelling it has", async () => {
    await s.rpc("AdminService/CreateQueue", { name: "a" });
    await s.rpc("AdminService/CreateQueue", { name: "b" });
    await s.post(
      "/mqlite.v1.QueueService/Send",
      `{"queue":"a","Queue":"b","messages":[{"body":"${b64("1")}"}]}`,
    );
    await s.post(
      "/mqlite.v1.QueueService/Send",
      `{"QUEUE":"a","queue":"b","messages":[{"body":"${b64("2")}"}]}`,
    );
    assert.equal((await s.rpc("QueueService/Stats", { queue: "a" })).json.total, 0);
    assert.equal((await s.rpc("QueueService/Stats", { queue: "b" })).json.total, 2);
  });

  it("a key that folds to no field is still an unknown field", async () => {
    const a = await s.rpc("QueueService/Send", { Queue: "q", Mesages: [] });
    assert.equal(a.status, 400);
    assert.equal(a.json.code, "invalid_argument");
    assert.match(a.json.message, /unknown field "Mesages"/);
  });
});
