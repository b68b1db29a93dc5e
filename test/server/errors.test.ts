import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { AUTH, b64, type Served, serve } from "./harness.js";

/** Every error answer is compact `{"code","message"}` JSON with a trailing newline. */
function assertError(a: { status: number; text: string }, status: number, code: string): void {
  assert.equal(a.status, status, a.text);
  assert.ok(a.text.endsWith("}\n"), "trailing newline");
  const body = JSON.parse(a.text);
  assert.deepEqual(Object.keys(body), ["code", "message"]);
  assert.equal(body.code, code);
  assert.equal(a.text, `${JSON.stringify(body)}\n`, "compact");
}

describe("error answers (raw HTTP)", () => {
  let s: Served;
  before(async () => {
    s = await serve({ maxMessageBytes: 16 });
    await s.rpc("AdminService/CreateQueue", { name: "q" });
    await s.rpc("AdminService/CreateQueue", { name: "fifo", config: { ordering_mode: "group_fifo" } });
    await s.rpc("AdminService/CreateQueue", { name: "dedup", config: { dedup_window_ms: 60_000 } });
  });
  after(() => s.close());

  describe("400 invalid_argument from strict decoding", () => {
    const send = (body: string) => s.post("/mqlite.v1.QueueService/Send", body);
    for (const [what, body] of [
      ["an unknown top-level field", '{"queue":"q","bogus":1}'],
      ["an unknown field inside messages[]", '{"queue":"q","messages":[{"body":"","nope":1}]}'],
      ["trailing data", '{"queue":"q"} {"queue":"q"}'],
      ["trailing garbage", '{"queue":"q"}x'],
      ["malformed JSON", '{"queue":'],
      ["an empty body", ""],
      ["a JSON array", "[]"],
      ["a string in an int field", '{"queue":"q","ttl_ms":"5"}'],
      ["a float in an int field", '{"queue":"q","ttl_ms":1.5}'],
      ["a float literal with a zero fraction", '{"queue":"q","ttl_ms":1.0}'],
      ["an exponent in an int field", '{"queue":"q","ttl_ms":1e3}'],
      ["a float literal deep in a message", '{"queue":"q","messages":[{"body":"eA==","priority":2.0}]}'],
      ["an exponent in a second message", '{"queue":"q","messages":[{"body":"eE1="},{"priority":1E0}]}'],
      ["a number in a string field", '{"queue":5}'],
      ["a non-string property value", '{"queue":"q","messages":[{"properties":{"k":1}}]}'],
      [
        "a non-string value under a __proto__ key",
        '{"queue":"q","messages":[{"properties":{"__proto__":1}}]}',
      ],
      ["properties as a list", '{"queue":"q","messages":[{"properties":["k"]}]}'],
      ["properties as a string", '{"queue":"q","messages":[{"properties":"k=v"}]}'],
      ["bad base64", '{"queue":"q","messages":[{"body":"not base64!"}]}'],
      ["unpadded base64", '{"queue":"q","messages":[{"body":"aGk"}]}'],
    ] as const) {
      it(what, async () => assertError(await send(body), 400, "invalid_argument"));
    }

    it("none of those refused sends stored anything", async () => {
      const stats = await s.rpc("QueueService/Stats", { queue: "q" });
      assert.equal(stats.status, 200, stats.text);
      assert.equal(stats.json.total, 0, stats.text);
    });

    it("an unknown field nested in config or filter", async () => {
      assertError(
        await s.post("/mqlite.v1.AdminService/CreateQueue", { name: "x", config: { lock: 1 } }),
        400,
        "invalid_argument",
      );
      assertError(
        await s.post("/mqlite.v1.AdminService/Subscribe", {
          topic: "t",
          name: "n",
          filter: { expression: "" },
        }),
        400,
        "invalid_argument",
      );
    });

    it("base64 with line breaks is accepted, as Go's decoder ignores CR and LF", async () => {
      const a = await s.post("/mqlite.v1.QueueService/Send", {
        queue: "q",
        messages: [{ body: "aGVs\r\nbG8=" }],
      });
      assert.equal(a.status, 200, a.text);
    });

    it("null means absent", async () => {
      const a = await s.post("/mqlite.v1.QueueService/Peek", { queue: "q", state: null, max: null });
      assert.equal(a.status, 200, a.text);
    });

    it("the message names the unknown field", async () => {
      const a = await send('{"queue":"q","bogus":1}');
      assert.match(JSON.parse(a.text).message, /unknown field "bogus"/);
    });

    it("engine validation: empty name, bad enum, bad filter, negative bounds, RenewBatch over 512", async () => {
      assertError(await s.post("/mqlite.v1.AdminService/CreateQueue", { name: "" }), 400, "invalid_argument");
      assertError(
        await s.post("/mqlite.v1.AdminService/CreateQueue", { name: "x", config: { ordering_mode: "lifo" } }),
        400,
        "invalid_argument",
      );
      assertError(
        await s.post("/mqlite.v1.AdminService/Subscribe", { topic: "t", name: "n", filter: { expr: "((" } }),
        400,
        "invalid_argument",
      );
      assertError(
        await s.post("/mqlite.v1.QueueService/Send", {
          queue: "q",
          messages: [{}],
          scheduled_enqueue_time_ms: -1,
        }),
        400,
        "invalid_argument",
      );
      assertError(
        await s.post("/mqlite.v1.AdminService/Purge", { queue: "q", max: -1 }),
        400,
        "invalid_argument",
      );
      const many = Array.from({ length: 513 }, (_, i) => ({ seq_number: i + 1, lock_token: "t" }));
      assertError(
        await s.post("/mqlite.v1.QueueService/RenewBatch", { queue: "q", messages: many }),
        400,
        "invalid_argument",
      );
    });

    it("400 group_required for a group_fifo send without group_id", async () => {
      assertError(
        await s.post("/mqlite.v1.QueueService/Send", { queue: "fifo", messages: [{ body: b64("x") }] }),
        400,
        "group_required",
      );
    });
  });

  it("401 unauthenticated without a token", async () => {
    assertError(await s.post("/mqlite.v1.QueueService/Send", "{}", {}), 401, "unauthenticated");
  });

  describe("404 not_found", () => {
    it("an unknown path, naming it", async () => {
      const a = await s.post("/nowhere", "{}");
      assertError(a, 404, "not_found");
      assert.equal(JSON.parse(a.text).message, "no such path: /nowhere");
    });
    for (const [rpc, body] of [
      ["QueueService/Send", { queue: "nope", messages: [{}] }],
      ["QueueService/Send", { queue: "", messages: [{}] }],
      ["QueueService/Receive", { queue: "nope" }],
      ["QueueService/ReceiveDeferred", { queue: "nope", seq_numbers: [1] }],
      ["QueueService/Renew", { queue: "nope", seq_number: 1, lock_token: "t" }],
      ["QueueService/RenewBatch", { queue: "nope", messages: [{ seq_number: 1, lock_token: "t" }] }],
      ["QueueService/Stats", { queue: "nope" }],
      ["QueueService/Cancel", { queue: "q", seq_number: 424242 }],
      ["AdminService/Redrive", { queue: "nope" }],
      ["AdminService/Redrive", { queue: "q", target: "nope" }],
      ["AdminService/Purge", { queue: "nope" }],
    ] as const) {
      it(`${rpc} ${JSON.stringify(body)}`, async () =>
        assertError(await s.post(`/mqlite.v1.${rpc}`, body), 404, "not_found"));
    }
    it("/ui with the console off", async () => {
      const res = await fetch(`${s.url}/ui`);
      assertError({ status: res.status, text: await res.text() }, 404, "not_found");
    });
  });

  it("405 unimplemented for a non-POST request to an RPC route, after auth", async () => {
    for (const method of ["GET", "PUT", "DELETE"]) {
      const res = await fetch(`${s.url}/mqlite.v1.QueueService/Send`, { method, headers: AUTH });
      const a = { status: res.status, text: await res.text() };
      assertError(a, 405, "unimplemented");
      assert.equal(JSON.parse(a.text).message, "POST required");
    }
    const unauth = await fetch(`${s.url}/mqlite.v1.QueueService/Send`);
    assert.equal(unauth.status, 401);
    await unauth.text();
  });

  describe("409", () => {
    for (const rpc of ["Complete", "Abandon", "Reject", "Defer"]) {
      it(`lock_lost: ${rpc} on an unknown queue`, async () =>
        assertError(
          await s.post(`/mqlite.v1.QueueService/${rpc}`, { queue: "nope", seq_number: 1, lock_token: "t" }),
          409,
          "lock_lost",
        ));
    }
    it("lock_lost: a stale or empty token, and Renew with a bad token on a real queue", async () => {
      const [seq] = (await s.rpc("QueueService/Send", { queue: "q", messages: [{ body: b64("l") }] })).json
        .seq_numbers;
      await s.rpc("QueueService/Receive", { queue: "q", max_messages: 256 });
      for (const rpc of ["Complete", "Renew"]) {
        for (const token of ["", "0".repeat(32)]) {
          assertError(
            await s.post(`/mqlite.v1.QueueService/${rpc}`, {
              queue: "q",
              seq_number: seq,
              lock_token: token,
            }),
            409,
            "lock_lost",
          );
        }
      }
    });
    it("already_exists: a single-message dedup conflict", async () => {
      await s.rpc("QueueService/Send", { queue: "dedup", messages: [{ message_id: "a", body: b64("1") }] });
      assertError(
        await s.post("/mqlite.v1.QueueService/Send", {
          queue: "dedup",
          messages: [{ message_id: "a", body: b64("2") }],
        }),
        409,
        "already_exists",
      );
    });
    it("name_conflict: a queue named after a topic, a subscription named after a queue", async () => {
      await s.rpc("AdminService/Subscribe", { topic: "topic", name: "sub" });
      assertError(
        await s.post("/mqlite.v1.AdminService/CreateQueue", { name: "topic" }),
        409,
        "name_conflict",
      );
      assertError(
        await s.post("/mqlite.v1.AdminService/Subscribe", { topic: "t2", name: "q" }),
        409,
        "name_conflict",
      );
    });
  });

  describe("413 message_too_large", () => {
    it("a message body over the per-message cap (the cap itself is fine)", async () => {
      const ok = await s.post("/mqlite.v1.QueueService/Send", {
        queue: "q",
        messages: [{ body: Buffer.alloc(16).toString("base64") }],
      });
      assert.equal(ok.status, 200, ok.text);
      assertError(
        await s.post("/mqlite.v1.QueueService/Send", {
          queue: "nope",
          messages: [{ body: Buffer.alloc(17).toString("base64") }],
        }),
        413,
        "message_too_large",
      );
    });

    it("a request body over 32 MiB, with Content-Length", async () => {
      const a = await s.post("/mqlite.v1.QueueService/Send", `{"queue":"${"x".repeat(32 * 1024 * 1024)}"}`);
      assertError(a, 413, "message_too_large");
      assert.equal(JSON.parse(a.text).message, "request body over 33554432 bytes");
    });

    it("a chunked request body over 32 MiB", async () => {
      const url = new URL(`${s.url}/mqlite.v1.QueueService/Send`);
      const a = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(
          url,
          { method: "POST", headers: { ...AUTH, "transfer-encoding": "chunked" } },
          (res) => {
            let text = "";
            res.on("data", (d) => {
              text += d;
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        req.on("error", reject);
        const chunk = "x".repeat(1024 * 1024);
        req.write('{"queue":"');
        for (let i = 0; i < 33; i++) req.write(chunk);
        req.end('"}');
      });
      assertError(a, 413, "message_too_large");
    });
  });

  it("500 internal for an unexpected failure, with the error's message", async () => {
    const failing = await serve({ tokens: [] });
    (failing.broker as any).stats = () => Promise.reject(new Error("disk on fire"));
    try {
      const a = await failing.post(
        "/mqlite.v1.QueueService/Stats",
        { queue: "q" },
        { "Content-Type": "application/json" },
      );
      assertError(a, 500, "internal");
      assert.equal(JSON.parse(a.text).message, "disk on fire");
    } finally {
      await failing.close();
    }
  });
});
