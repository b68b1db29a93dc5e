// Message properties are bounded: at most 1000 per message and 64 KiB of names and values. Before,
// a Send of a million properties (14 MB of JSON) was accepted after blocking the served broker for
// about 25 s, every Peek of it blocked for 15 s more, and 30 messages with a 20 MB property made
// every Peek and Receive of the queue fail with 500 "Invalid string length" (Receive after locking
// them, so the queue was stuck). Reads now count property bytes in their 32 MiB budget too.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { InvalidArgumentError, MessageTooLargeError } from "../../src/contract/errors.js";
import { MAX_MESSAGE_PROPERTIES, MAX_PROPERTY_BYTES } from "../../src/contract/limits.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { b64, serve } from "../server/harness.js";
import { tempDir } from "../support/temp.js";

const props = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));

describe("reliability: message properties are bounded", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("the engine refuses more than 1000 properties or more than 64 KiB of them", async () => {
    const broker = await openBroker(":memory:", { background: false, logger: silentLogger });
    try {
      await broker.createQueue("q");
      await broker.send("q", { body: "x", properties: props(MAX_MESSAGE_PROPERTIES) });
      await assert.rejects(
        broker.send("q", { body: "x", properties: props(MAX_MESSAGE_PROPERTIES + 1) }),
        InvalidArgumentError,
      );
      await broker.send("q", { body: "x", properties: { p: "v".repeat(MAX_PROPERTY_BYTES - 1) } });
      await assert.rejects(
        broker.send("q", { body: "x", properties: { p: "v".repeat(MAX_PROPERTY_BYTES) } }),
        MessageTooLargeError,
      );
      await assert.rejects(
        broker.publish("t", { body: "x", properties: props(MAX_MESSAGE_PROPERTIES + 1) }),
        InvalidArgumentError,
      );
      assert.equal((await broker.stats("q")).total, 2);
    } finally {
      await broker.close();
    }
  });

  it("over HTTP a huge property map is a 400 before it is validated field by field", async () => {
    const s = await serve();
    try {
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      const huge = await s.post("/mqlite.v1.QueueService/Send", {
        queue: "q",
        messages: [{ body: b64("x"), properties: props(200_000) }],
      });
      assert.equal(huge.status, 400, huge.text);
      assert.equal(JSON.parse(huge.text).code, "invalid_argument");
      const big = await s.post("/mqlite.v1.QueueService/Send", {
        queue: "q",
        messages: [{ body: b64("x"), properties: { p: "v".repeat(100_000) } }],
      });
      assert.equal(big.status, 413, big.text);
      assert.equal((await s.rpc("QueueService/Stats", { queue: "q" })).json.total, 0);
    } finally {
      await s.close();
    }
  });

  it("Peek and Receive count property bytes in their 32 MiB budget (rows written before the limit)", async () => {
    const path = tmp.file("old-rows.db");
    const s = await serve({}, { path });
    try {
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      await s.rpc("QueueService/Send", {
        queue: "q",
        messages: [{ body: b64("a") }, { body: b64("b") }, { body: b64("c") }],
      });
      // Rows as an older version could store them: 20 MB of properties each.
      const raw = new Database(path);
      raw
        .prepare("UPDATE messages SET properties = ?")
        .run(JSON.stringify({ p: "x".repeat(20 * 1024 * 1024) }));
      raw.close();
      const peek = await s.rpc("QueueService/Peek", { queue: "q", max: 1000 });
      assert.equal(peek.status, 200);
      assert.equal(peek.json.messages.length, 2, "the second crosses the budget");
      const got = await s.rpc("QueueService/Receive", { queue: "q", max_messages: 256 });
      assert.equal(got.status, 200);
      assert.equal(got.json.messages.length, 2);
    } finally {
      await s.close();
    }
  });
});
