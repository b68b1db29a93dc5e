// What large bodies leave behind is collected: the 64 KiB chunks a body arrives in (each a buffer
// of its own, garbage once copied into the request's buffer) as they come rather than piling up to
// the body's size, and the old generation once every few MiB of large bodies have been answered.
import assert from "node:assert/strict";
import { request } from "node:http";
import { constants, PerformanceObserver } from "node:perf_hooks";
import { after, before, describe, it } from "node:test";
import { COLLECT_AFTER_BODY_BYTES, COLLECT_EVERY_BYTES } from "../../src/server/rpc/body-garbage.js";
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

/** Counts the whole-heap collections that were asked for (not V8's own) while it observes. */
function forcedMajors(): { count: () => number; stop: () => void } {
  let n = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const { kind, flags } = (e as PerformanceEntry & { detail: { kind: number; flags: number } }).detail;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR && flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED)
        n++;
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return { count: () => n, stop: () => observer.disconnect() };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("what large bodies leave behind", () => {
  let served: Served;
  before(async () => {
    served = await serve();
    await served.broker.createQueue("big");
  });
  after(() => served.close());

  // First in the file: no large body was answered before it.
  it("the whole heap is collected once every few MiB of large bodies have been answered, not before", async () => {
    const bytes = sendBytes(120); // 385 KB: a large body (256 KiB and up)
    const under = Math.floor((COLLECT_AFTER_BODY_BYTES - 1) / bytes.length);
    const majors = forcedMajors();
    try {
      for (let i = 0; i < under; i++) {
        assert.equal((await post(served.url, "/mqlite.v1.QueueService/Send", bytes)).status, 200);
      }
      await sleep(300); // gc entries are delivered after the collection, on a later turn
      assert.equal(majors.count(), 0, `${under} bodies of ${bytes.length} bytes started a collection`);
      assert.equal((await post(served.url, "/mqlite.v1.QueueService/Send", bytes)).status, 200);
      for (let waited = 0; majors.count() === 0 && waited < 5000; waited += 20) await sleep(20);
      assert.equal(majors.count(), 1);
    } finally {
      majors.stop();
    }
  });

  it("a body's arrival chunks are collected as it arrives: buffer memory grows by the body and a few MiB, not twice the body", async () => {
    const bytes = sendBytes(8000); // 26 MB
    const held = (await served.broker.stats("big")).active;
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
    assert.equal((await served.broker.stats("big")).active, held + 8000);
  });
});
