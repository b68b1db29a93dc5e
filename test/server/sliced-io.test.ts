// A large request is read chunk by chunk and a large answer written in slices (so that other
// requests are served meanwhile): the outcome is the one of reading and writing them whole,
// characters split across the body's chunks included.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { encodeJson, messageToWire } from "../../src/wire/index.js";
import { b64, serve } from "./harness.js";

describe("large requests and answers", () => {
  it("a Send of over 1 MiB with multi-byte properties stores every character, and a Peek of it answers encodeJson's text byte for byte", async () => {
    const s = await serve();
    try {
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      // Three- and four-byte characters at every offset: some straddle the body's chunks.
      const value = (i: number) => `${"€😀é".repeat(50 + (i % 7))}${i}`;
      const messages = Array.from({ length: 2000 }, (_, i) => ({
        body: b64(`body ${i} ${"x".repeat(i % 50)}`),
        properties: { v: value(i), ascii: `a${i}` },
      }));
      const request = JSON.stringify({ queue: "q", messages });
      assert.ok(Buffer.byteLength(request) > 2 ** 20, "large enough to be read in chunks");
      const sent = await s.rpc("QueueService/Send", { queue: "q", messages });
      assert.equal(sent.status, 200, sent.text);
      assert.equal(sent.json.seq_numbers.length, 2000);

      const peek = await s.post("/mqlite.v1.QueueService/Peek", { queue: "q", max: 1000 });
      assert.equal(peek.status, 200);
      assert.equal(peek.headers.get("content-type"), "application/json");
      assert.equal(peek.headers.get("content-length"), null, "written in slices, not whole");
      const stored = await s.broker.peek("q", { max: 1000 });
      assert.equal(stored.length, 1000);
      assert.equal(peek.text, encodeJson({ messages: stored.map(messageToWire) }));
      for (const [i, m] of stored.entries()) assert.deepEqual(m.properties, { v: value(i), ascii: `a${i}` });
    } finally {
      await s.close();
    }
  });
});
