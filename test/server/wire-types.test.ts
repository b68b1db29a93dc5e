import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { b64, type Served, serve } from "./harness.js";

// The JSON type of every field the original's answers define (its Go structs: int64 → an integer,
// string, bool, []byte → base64 string, map[string]string). Its clients decode with encoding/json,
// which fails on a fraction in an integer field. Our extension fields are not checked here.
type Shape = "int" | "string" | "bool" | "strings" | { [field: string]: Shape } | [Shape];

const MESSAGE: Shape = {
  seq_number: "int",
  enqueued_at_ms: "int",
  expires_at_ms: "int",
  visible_at_ms: "int",
  locked_until_ms: "int",
  delivery_count: "int",
  lock_token: "string",
  state: "string",
  dead_letter_reason: "string",
  dead_letter_description: "string",
  message_id: "string",
  correlation_id: "string",
  reply_to: "string",
  group_id: "string",
  content_type: "string",
  subject: "string",
  properties: "strings",
  body: "string",
};

/** Receive and ReceiveDeferred show no state, visibility, expiry or dead-letter fields (§1.8). */
const RECEIVED: Shape = Object.fromEntries(
  Object.entries(MESSAGE).filter(
    ([f]) =>
      !["expires_at_ms", "visible_at_ms", "state", "dead_letter_reason", "dead_letter_description"].includes(
        f,
      ),
  ),
);
/** Peek never shows a lock token. */
const PEEKED: Shape = Object.fromEntries(Object.entries(MESSAGE).filter(([f]) => f !== "lock_token"));

const ANSWERS: Record<string, Shape> = {
  Send: { seq_numbers: ["int"] },
  Receive: { messages: [RECEIVED] },
  Settle: { ok: "bool" },
  CompleteBatch: { results: [{ seq_number: "int", ok: "bool" }] },
  RenewBatch: { results: [{ seq_number: "int", ok: "bool", locked_until_ms: "int" }] },
  Peek: { messages: [PEEKED] },
  Stats: {
    queue: "string",
    active: "int",
    locked: "int",
    deferred: "int",
    scheduled: "int",
    dead_lettered: "int",
    total: "int",
    oldest_message_age_ms: "int",
  },
  ListQueues: {
    queues: [
      {
        name: "string",
        kind: "string",
        lock_duration_ms: "int",
        max_delivery_count: "int",
        default_ttl_ms: "int",
        dedup_window_ms: "int",
      },
    ],
  },
  ListSubscriptions: { subscriptions: [{ topic: "string", name: "string", expr: "string" }] },
  TestFilter: { valid: "bool", error: "string", ran: "bool", matched: "bool" },
  Redrive: { moved: "int" },
  Purge: { purged: "int" },
  Status: {
    version: "string",
    backend: "string",
    remote: "bool",
    location: "string",
    schema_version: "string",
    ping_ms: "int",
    db_size_bytes: "int",
    queues: "int",
    subscriptions: "int",
    uptime_ms: "int",
    auth: "bool",
  },
};

/** Every mismatch between `value` and `shape`, as `path: expected, got`. Absent fields are omitempty. */
function mismatches(value: unknown, shape: Shape, path: string): string[] {
  const got = JSON.stringify(value);
  if (shape === "int") return Number.isSafeInteger(value) ? [] : [`${path}: int, got ${got}`];
  if (shape === "string") return typeof value === "string" ? [] : [`${path}: string, got ${got}`];
  if (shape === "bool") return typeof value === "boolean" ? [] : [`${path}: bool, got ${got}`];
  if (shape === "strings") {
    const ok =
      typeof value === "object" &&
      value !== null &&
      !Array.isArray(value) &&
      Object.values(value).every((v) => typeof v === "string");
    return ok ? [] : [`${path}: map of strings, got ${got}`];
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return [`${path}: array, got ${got}`];
    return value.flatMap((v, i) => mismatches(v, shape[0], `${path}[${i}]`));
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return [`${path}: object, got ${got}`];
  const record = value as Record<string, unknown>;
  return Object.entries(shape).flatMap(([field, s]) =>
    field in record ? mismatches(record[field], s, `${path}.${field}`) : [],
  );
}

describe("wire types: every field of our answers has the original's JSON type", () => {
  let s: Served;
  const seen = new Set<string>();
  before(async () => {
    s = await serve({}, { path: `/tmp/mqlite-wire-types-${process.pid}.db` });
  });
  after(() => s.close());

  /** Calls the RPC, checks its answer against `shape`, and records which fields were present. */
  const call = async (rpc: string, body: unknown, shape: keyof typeof ANSWERS) => {
    const a = await s.rpc(rpc, body);
    assert.equal(a.status, 200, `${rpc}: ${a.text}`);
    assert.deepEqual(mismatches(a.json, ANSWERS[shape]!, shape), []);
    collect(a.json, ANSWERS[shape]!, shape);
    return a.json;
  };
  const collect = (value: unknown, shape: Shape, path: string): void => {
    if (value === undefined) return;
    seen.add(path);
    if (Array.isArray(shape)) for (const v of value as unknown[]) collect(v, shape[0], `${path}[]`);
    else if (typeof shape === "object")
      for (const [f, sh] of Object.entries(shape)) collect((value as any)[f], sh, `${path}.${f}`);
  };

  it("every RPC's answer, with every field the original defines present at least once", async () => {
    await s.rpc("AdminService/CreateQueue", {
      name: "q",
      config: {
        lock_duration_ms: 1000,
        max_delivery_count: 2,
        default_ttl_ms: 60_000,
        dedup_window_ms: 5000,
      },
    });
    await s.rpc("AdminService/Subscribe", { topic: "t", name: "sub", filter: { expr: "subject == 'x'" } });
    const full = {
      body: b64("hello"),
      message_id: "m1",
      correlation_id: "c",
      reply_to: "r",
      group_id: "g",
      content_type: "text/plain",
      subject: "x",
      properties: { k: "v" },
    };
    await call(
      "QueueService/Send",
      { queue: "q", messages: [full, { body: b64("b") }, { body: b64("c") }] },
      "Send",
    );
    await call("QueueService/Send", { queue: "t", messages: [{ body: b64("t"), subject: "x" }] }, "Send");
    s.clock.advance(7);
    const got = (await call("QueueService/Receive", { queue: "q", max_messages: 3 }, "Receive")).messages;
    const [a, b, c] = got;
    await call(
      "QueueService/Renew",
      { queue: "q", seq_number: a.seq_number, lock_token: a.lock_token },
      "Settle",
    );
    await call(
      "QueueService/RenewBatch",
      { queue: "q", messages: [{ seq_number: a.seq_number, lock_token: a.lock_token }] },
      "RenewBatch",
    );
    await call(
      "QueueService/Reject",
      {
        queue: "q",
        seq_number: b.seq_number,
        lock_token: b.lock_token,
        dead_letter_reason: "R",
        dead_letter_description: "D",
      },
      "Settle",
    );
    await call("QueueService/Peek", { queue: "q" }, "Peek");
    await call("QueueService/Stats", { queue: "q" }, "Stats");
    await call(
      "QueueService/CompleteBatch",
      { queue: "q", messages: [{ seq_number: c.seq_number, lock_token: c.lock_token }] },
      "CompleteBatch",
    );
    await call("AdminService/ListQueues", {}, "ListQueues");
    await call("AdminService/ListSubscriptions", {}, "ListSubscriptions");
    await call(
      "AdminService/TestFilter",
      { expr: "body.x > 1", message: { body: b64("nope") } },
      "TestFilter",
    );
    await call("AdminService/Redrive", { queue: "q", max: 1 }, "Redrive");
    await call("AdminService/Purge", { queue: "q" }, "Purge");
    for (let i = 0; i < 5; i++) await call("AdminService/Status", {}, "Status");

    const expected = [...Object.entries(ANSWERS)].flatMap(([name, shape]) => {
      const out: string[] = [];
      const walk = (sh: Shape, path: string) => {
        out.push(path);
        if (Array.isArray(sh)) walk(sh[0], `${path}[]`);
        else if (typeof sh === "object") for (const [f, x] of Object.entries(sh)) walk(x, `${path}.${f}`);
      };
      walk(shape, name);
      return out;
    });
    assert.deepEqual(
      expected.filter((p) => !seen.has(p)),
      [],
      "fields never answered (the test should produce each at least once)",
    );
  });

  it("the checker itself refuses a fractional ping, a string count and a non-string property", () => {
    assert.deepEqual(mismatches({ ping_ms: 0.079 }, ANSWERS.Status!, "Status"), [
      "Status.ping_ms: int, got 0.079",
    ]);
    assert.deepEqual(mismatches({ moved: "1" }, ANSWERS.Redrive!, "Redrive"), [
      'Redrive.moved: int, got "1"',
    ]);
    assert.deepEqual(mismatches({ messages: [{ properties: { k: 1 } }] }, ANSWERS.Peek!, "Peek"), [
      'Peek.messages[0].properties: map of strings, got {"k":1}',
    ]);
  });
});
