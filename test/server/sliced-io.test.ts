// A large request is read chunk by chunk and a large answer written in slices (so that other
// requests are served meanwhile): the outcome is the one of reading and writing them whole,
// characters split across the body's chunks included.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Message } from "../../src/contract/types.js";
import { encodeJson, LARGE_BODY_BYTES, messageJsonBytes, messageToWire } from "../../src/wire/index.js";
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

  it("Peek, Receive and ReceiveDeferred answer messages with large bodies as encodeJson's text, byte for byte", async () => {
    const s = await serve();
    try {
      await s.rpc("AdminService/CreateQueue", { name: 'q"body"' });
      // Sizes around the large-body threshold and the base64 pieces, each remainder modulo 3.
      const sizes = [LARGE_BODY_BYTES - 1, LARGE_BODY_BYTES, LARGE_BODY_BYTES + 1, 49_153, 98_305, 200_002];
      const messages = sizes.map((n, i) => ({
        body: Buffer.alloc(n, i + 1).toString("base64"),
        // A property that reads like the body's key and value, before the real body.
        properties: { body: "AA==", k: `é${i}` },
        subject: '"body":"AA=="',
      }));
      const sent = await s.rpc("QueueService/Send", { queue: 'q"body"', messages });
      assert.equal(sent.status, 200, sent.text);
      const stored = await s.broker.peek('q"body"', { max: 100 });
      assert.equal(stored.length, sizes.length);
      const peek = await s.post("/mqlite.v1.QueueService/Peek", { queue: 'q"body"', max: 100 });
      assert.equal(peek.status, 200);
      const peeked = encodeJson({ messages: stored.map(messageToWire) });
      assert.equal(peek.text, peeked);
      const got = await s.post("/mqlite.v1.QueueService/Receive", { queue: 'q"body"', max_messages: 100 });
      assert.equal(got.status, 200);
      // A Receive's messages carry their lock tokens: each one as its wire form would, in order.
      const received = JSON.parse(got.text).messages as { lock_token: string }[];
      assert.equal(received.length, sizes.length);
      const locked = await s.broker.peek('q"body"', { max: 100 });
      const asReceived = locked.map((m, i) => ({ ...m, lockToken: received[i]!.lock_token }));
      assert.equal(
        got.text,
        encodeJson({
          messages: asReceived.map((m) => {
            const { state, visible_at_ms, ...w } = messageToWire(m);
            return w;
          }),
        }),
      );
    } finally {
      await s.close();
    }
  });

  it("a one-message answer is written in slices when its body is large, whole when it is small", async () => {
    const s = await serve();
    try {
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      for (const n of [300_000, 10]) {
        const sent = await s.rpc("QueueService/Send", {
          queue: "q",
          messages: [{ body: Buffer.alloc(n, 5).toString("base64") }],
        });
        assert.equal(sent.status, 200, sent.text);
        const [stored] = await s.broker.peek("q", { max: 1 });
        const peek = await s.post("/mqlite.v1.QueueService/Peek", { queue: "q", max: 1 });
        assert.equal(peek.status, 200);
        assert.equal(peek.text, encodeJson({ messages: [messageToWire(stored!)] }));
        if (n > LARGE_BODY_BYTES) assert.equal(peek.headers.get("content-length"), null, "written in slices");
        else
          assert.equal(
            peek.headers.get("content-length"),
            String(Buffer.byteLength(peek.text)),
            "written whole",
          );
        const got = await s.post("/mqlite.v1.QueueService/Receive", { queue: "q", max_messages: 1 });
        assert.equal(got.status, 200);
        const [m] = JSON.parse(got.text).messages as {
          seq_number: number;
          lock_token: string;
          body: string;
        }[];
        assert.equal(Buffer.from(m!.body, "base64").length, n);
        assert.equal(
          (
            await s.rpc("QueueService/Complete", {
              queue: "q",
              seq_number: m!.seq_number,
              lock_token: m!.lock_token,
            })
          ).status,
          200,
        );
      }
    } finally {
      await s.close();
    }
  });

  it("messageJsonBytes writes what JSON.stringify(messageToWire(m)) writes, for a large body only", () => {
    const base: Message = {
      seqNumber: 7,
      body: Buffer.alloc(0),
      enqueuedAt: 1,
      deliveryCount: 2,
      properties: { body: "AA==", x: "😀" },
      subject: "s",
      priority: 3,
      queue: 'a"body":"AA=="',
    };
    for (const n of [LARGE_BODY_BYTES, LARGE_BODY_BYTES + 1, LARGE_BODY_BYTES + 2, 3 * 49_152 + 1]) {
      const m = { ...base, body: Buffer.from(Array.from({ length: n }, (_, i) => (i * 7) % 256)) };
      const pieces = messageJsonBytes(m);
      assert.ok(pieces, `a body of ${n} bytes is written as bytes`);
      assert.equal(Buffer.concat(pieces).toString(), JSON.stringify(messageToWire(m)));
      for (const piece of pieces) assert.ok(piece.length <= 64 * 1024, "each piece stays under 64 KiB");
    }
    assert.equal(messageJsonBytes({ ...base, body: Buffer.alloc(LARGE_BODY_BYTES - 1) }), undefined);
  });
});
