// A lone surrogate has no UTF-8 form: SQLite stored its replacement bytes, so a queue created as
// "q\ud800" was listed as "q\ufffd\ufffd\ufffd", two such names collided, and a send to it failed
// with a foreign-key error (500). The embedded engine refuses such text; the served broker's
// decoder replaces lone surrogates by U+FFFD, as the original's (Go) decoder does.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidArgumentError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { decodeJsonObject } from "../../src/wire/json.js";
import { b64, serve } from "../server/harness.js";

describe("reliability: lone surrogates", () => {
  it("the embedded engine refuses them in names and message text with invalid_argument", async () => {
    const broker = await openBroker(":memory:", { background: false, logger: silentLogger });
    try {
      await assert.rejects(broker.createQueue("q\ud800"), InvalidArgumentError);
      await assert.rejects(broker.subscribe("t\udc00", "s"), InvalidArgumentError);
      await assert.rejects(broker.subscribe("t", "s\ud83d"), InvalidArgumentError);
      await broker.createQueue("q");
      await assert.rejects(broker.send("q", { body: "x", messageId: "m\ud800" }), InvalidArgumentError);
      await assert.rejects(broker.send("q", { body: "x", subject: "\udfff" }), InvalidArgumentError);
      // A well-formed pair (an emoji) is fine.
      await broker.createQueue("q\ud83d\ude00");
      await broker.send("q\ud83d\ude00", { body: "x", messageId: "\ud83d\ude00" });
      const [m] = await broker.receive("q\ud83d\ude00");
      assert.equal(m?.messageId, "\ud83d\ude00");
      assert.equal((await broker.stats("q")).total, 0, "nothing was stored");
    } finally {
      await broker.close();
    }
  });

  it("the wire decoder replaces them by U+FFFD, in values and keys, however deep", () => {
    const v = decodeJsonObject('{"name":"q\\ud800","p":{"\\udc00k":["a\\ud83d\\ude00","\\ud83d"]}}');
    assert.deepEqual(v, { name: "q\ufffd", p: { "\ufffdk": ["a\ud83d\ude00", "\ufffd"] } });
    const proto = decodeJsonObject('{"__proto__":"\\ud800"}');
    assert.equal(Object.getPrototypeOf(proto), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(proto, "__proto__")?.value, "\ufffd");
    const deep = decodeJsonObject(`{"a":${"[".repeat(100_000)}"\\ud800"${"]".repeat(100_000)}}`);
    assert.ok(Array.isArray(deep.a));
  });

  it("over HTTP a queue named with a lone surrogate is one queue, reached by the same name", async () => {
    const s = await serve();
    try {
      assert.equal((await s.rpc("AdminService/CreateQueue", { name: "q\ud800" })).status, 200);
      const sent = await s.rpc("QueueService/Send", {
        queue: "q\ud800",
        messages: [{ body: b64("x"), message_id: "m\ud800", properties: { "k\udc00": "v\ud800" } }],
      });
      assert.equal(sent.status, 200, sent.text);
      const { json } = await s.rpc("AdminService/ListQueues", {});
      assert.deepEqual(
        json.queues.map((q: { name: string }) => q.name),
        ["q\ufffd"],
      );
      const got = await s.rpc("QueueService/Receive", { queue: "q\ufffd" });
      assert.equal(got.json.messages[0].message_id, "m\ufffd");
      assert.deepEqual(got.json.messages[0].properties, { "k\ufffd": "v\ufffd" });
      // A different lone surrogate is the same name once replaced, as in the original.
      assert.equal((await s.rpc("QueueService/Stats", { queue: "q\udbff" })).json.locked, 1);
    } finally {
      await s.close();
    }
  });
});
