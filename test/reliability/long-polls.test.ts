// Long-polls always end: at their deadline, on abort, or when the server stops; and a flood of them
// is bounded per server.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { silentLogger } from "../../src/engine/logger.js";
import { openBroker } from "../../src/engine/open.js";
import { ManualClock } from "../../src/store/clock.js";
import { serve } from "../server/harness.js";

const within = async <T>(ms: number, what: string, p: Promise<T>): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} still waiting after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
};

describe("reliability: long-polls end", () => {
  it("ReceiveAny with no queue and AwaitSettled with no message end at their deadline (they used to wait forever)", async () => {
    const broker = await openBroker(":memory:", { background: false, logger: silentLogger });
    try {
      assert.deepEqual(await within(3000, "receiveAny([])", broker.receiveAny([], { waitMs: 200 })), []);
      assert.deepEqual(await within(3000, "awaitSettled([])", broker.awaitSettled([], { waitMs: 200 })), []);
      const abort = new AbortController();
      const parked = broker.receiveAny([], { waitMs: 20_000, signal: abort.signal });
      setTimeout(() => abort.abort(), 100);
      assert.deepEqual(await within(3000, "an aborted receiveAny([])", parked), []);
    } finally {
      await broker.close();
    }
  });

  it("over HTTP too: the answer is empty at the deadline", async () => {
    const s = await serve();
    try {
      const any = await within(5000, "ReceiveAny", s.rpc("JobService/ReceiveAny", { wait_time_ms: 300 }));
      assert.equal(any.status, 200);
      assert.deepEqual(any.json.messages, []);
      const settled = await within(
        5000,
        "AwaitSettled",
        s.rpc("JobService/AwaitSettled", { seq_numbers: [], wait_time_ms: 300 }),
      );
      assert.equal(settled.status, 200);
    } finally {
      await s.close();
    }
  });

  it("ReceiveAny ends at its deadline in real time, as Receive does, even when an injected clock does not move", async () => {
    const clock = new ManualClock();
    const broker = await openBroker(":memory:", { clock, background: false, logger: silentLogger });
    try {
      await broker.createQueue("q");
      const started = performance.now();
      assert.deepEqual(await within(3000, "receiveAny", broker.receiveAny(["q"], { waitMs: 150 })), []);
      assert.deepEqual(await within(3000, "receive", broker.receive("q", { waitMs: 150 })), []);
      assert.ok(performance.now() - started >= 250, "both waited");
    } finally {
      await broker.close();
    }
  });
});
