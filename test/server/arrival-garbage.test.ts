// A large body arrives in 64 KiB chunks, each a buffer of its own, garbage once copied into the
// request's buffer: they are collected as they come rather than piling up to the body's size.
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { COLLECT_EVERY_BYTES } from "../../src/server/rpc/arrival-garbage.js";
import { AUTH, type Served, serve } from "./harness.js";

const MIB = 2 ** 20;

/** A Send of `n` messages of 2,400-byte bodies (3,200 bytes of base64 each), as bytes. */
function sendBytes(n: number): Buffer {
  const body = Buffer.alloc(2400, 7).toString("base64");
  return Buffer.from(
    JSON.stringify({
      queue: "big",
      messages: Array.from({ length: n }, (_, i) => ({ body, message_id: `m${i}` })),
    }),
  );
}

/** POSTs `bytes` in 64 KiB writes (views of `bytes`: the client allocates no buffer of its own). */
function post(url: string, path: string, bytes: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url + path, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json", "content-length": bytes.length },
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    for (let at = 0; at < bytes.length; at += 64 * 1024) req.write(bytes.subarray(at, at + 64 * 1024));
    req.end();
  });
}

describe("a large body's arrival chunks", () => {
  let served: Served;
  before(async () => {
    served = await serve();
    await served.broker.createQueue("big");
  });
  after(() => served.close());

  it("are collected as the body arrives: buffer memory grows by the body and a few MiB, not twice the body", async () => {
    const bytes = sendBytes(8000); // 26 MB
    let peak = process.memoryUsage().arrayBuffers;
    const start = peak;
    const sample = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    }, 1);
    try {
      const answer = await post(served.url, "/mqlite.v1.QueueService/Send", bytes);
      assert.equal(answer.status, 200, answer.text);
      assert.equal(JSON.parse(answer.text).seq_numbers.length, 8000);
    } finally {
      clearInterval(sample);
    }
    const grown = peak - start;
    // The request's own buffer is the body's size; its chunks, left to pile up, were as much again.
    assert.ok(
      grown < bytes.length + 2 * COLLECT_EVERY_BYTES,
      `buffer memory grew ${(grown / MIB).toFixed(1)} MiB for a ${(bytes.length / MIB).toFixed(1)} MiB body`,
    );
    assert.equal((await served.broker.stats("big")).active, 8000);
  });
});
