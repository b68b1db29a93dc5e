import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ClosedError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { tempDir } from "../support/temp.js";
import { AUTH, b64, serve } from "./harness.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("long-poll Receive", () => {
  it("returns promptly when a message arrives", async () => {
    const s = await serve();
    try {
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      const started = performance.now();
      const parked = s.rpc("QueueService/Receive", { queue: "q", wait_time_ms: 10_000 });
      await sleep(100);
      await s.rpc("QueueService/Send", { queue: "q", messages: [{ body: b64("now") }] });
      const { json } = await parked;
      assert.equal(json.messages.length, 1);
      assert.ok(performance.now() - started < 2000, "woken, not timed out");
    } finally {
      await s.close();
    }
  });

  it('answers {"messages":[]} at the deadline', async () => {
    const s = await serve();
    try {
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      const a = await s.post("/mqlite.v1.QueueService/Receive", { queue: "q", wait_time_ms: 150 });
      assert.equal(a.text, '{"messages":[]}\n');
    } finally {
      await s.close();
    }
  });

  it("releases its waiter when the client disconnects, so a later message is not claimed by nobody", async () => {
    const s = await serve();
    try {
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      const abort = new AbortController();
      const parked = fetch(`${s.url}/mqlite.v1.QueueService/Receive`, {
        method: "POST",
        headers: AUTH,
        body: JSON.stringify({ queue: "q", wait_time_ms: 20_000 }),
        signal: abort.signal,
      }).catch((err) => err);
      await sleep(150);
      assert.equal((s.broker as any).waiters.has("q"), true, "parked");
      abort.abort();
      await parked;
      for (let i = 0; i < 50 && (s.broker as any).waiters.has("q"); i++) await sleep(10);
      assert.equal((s.broker as any).waiters.has("q"), false, "released");
      await s.rpc("QueueService/Send", { queue: "q", messages: [{ body: b64("for the living") }] });
      const { json } = await s.rpc("QueueService/Receive", { queue: "q" });
      assert.equal(json.messages.length, 1, "the message went to the next receiver");
    } finally {
      await s.close();
    }
  });
});

describe("graceful stop", () => {
  it("wakes long-polls empty, finishes sends in flight, loses nothing acknowledged, closes the broker", async () => {
    const tmp = tempDir();
    const path = tmp.file("mq.db");
    try {
      const s = await serve({}, { path, synchronous: "full" });
      await s.rpc("AdminService/CreateQueue", { name: "q" });
      await s.rpc("AdminService/CreateQueue", { name: "idle" });
      const polls = Array.from({ length: 5 }, () =>
        s.post("/mqlite.v1.QueueService/Receive", { queue: "idle", wait_time_ms: 20_000 }),
      );
      await sleep(100);
      const acknowledged: number[] = [];
      let sending = true;
      const sender = async (worker: number) => {
        for (let i = 0; sending; i++) {
          const a = await s
            .post("/mqlite.v1.QueueService/Send", { queue: "q", messages: [{ body: b64(`${worker}-${i}`) }] })
            .catch((err: unknown) => ({ refused: err }));
          // A connection closed under the request: the send was not acknowledged.
          if ("refused" in a) {
            assert.ok(a.refused instanceof TypeError, `a network failure, not ${String(a.refused)}`);
            continue;
          }
          if (a.status === 200) acknowledged.push(...JSON.parse(a.text).seq_numbers);
          else {
            assert.equal(a.status, 503, a.text);
            assert.equal(JSON.parse(a.text).code, "closed");
          }
        }
      };
      const senders = Array.from({ length: 8 }, (_, w) => sender(w));
      await sleep(300);
      const started = performance.now();
      await s.server.close();
      sending = false;
      await Promise.all(senders);
      assert.ok(performance.now() - started < 5000, "no grace period needed");
      for (const a of await Promise.all(polls)) {
        assert.equal(a.status, 200);
        assert.equal(a.text, '{"messages":[]}\n');
      }
      assert.ok(acknowledged.length > 0, "sends went through before the stop");
      await assert.rejects(s.broker.stats("q"), ClosedError, "the broker is closed");
      await assert.rejects(fetch(`${s.url}/healthz`), "no longer listening");

      const reopened = await openBroker(path, { background: false, logger: silentLogger });
      try {
        const stored = new Set((await reopened.peek("q", { max: 1000 })).map((m) => m.seqNumber));
        const total = (await reopened.stats("q")).total;
        assert.ok(total <= 1000, "the peek covers every row");
        for (const seq of acknowledged) assert.ok(stored.has(seq), `acknowledged seq ${seq} is stored`);
      } finally {
        await reopened.close();
      }
    } finally {
      tmp.cleanup();
    }
  });

  it("cuts connections still busy after the grace period", async () => {
    const s = await serve({ graceMs: 200 });
    (s.broker as any).stats = () => new Promise(() => {}); // a call that never finishes
    const stuck = s.post("/mqlite.v1.QueueService/Stats", { queue: "q" }).catch((err) => err);
    await sleep(100);
    const started = performance.now();
    await s.server.close();
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 150 && elapsed < 3000, `stopped after the grace period (${elapsed} ms)`);
    assert.ok((await stuck) instanceof Error, "the stuck call's connection was cut");
  });

  it("close is idempotent", async () => {
    const s = await serve();
    await Promise.all([s.server.close(), s.server.close()]);
    await s.server.close();
    await assert.rejects(fetch(`${s.url}/healthz`), "no longer listening");
    await assert.rejects(s.broker.stats("q"), ClosedError, "the broker was closed once, and stays closed");
  });
});
