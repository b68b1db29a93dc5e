import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { Broker } from "../../../src/contract/broker.js";
import { LONG_WRITE_ITEMS } from "../../../src/core/port.js";
import type { Locked } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

/** Every message of `queue`, received (and so locked) in calls of 256. */
async function receiveAll(b: Broker, queue: string): Promise<Locked[]> {
  const out: Locked[] = [];
  for (;;) {
    const got = await b.receive(queue, { maxMessages: 256, waitMs: 0 });
    if (got.length === 0) return out;
    out.push(...(got as Locked[]));
  }
}

// Batches large enough to be long writes (`WriteOptions.long`), which SQLite runs in slices with
// the event loop turning between them: each must still be one transaction to everyone else.
cases((factory) => {
  describe("§10 long batches", () => {
    const N = 3 * LONG_WRITE_ITEMS;
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 60_000 });
      await s.broker.createQueue("r");
    });
    afterEach(() => s.close());

    it("10.x a send of thousands is stored whole and in order; reads made meanwhile see none or all", async () => {
      const body = "x".repeat(2000);
      const sent = s.broker.send(
        "q",
        Array.from({ length: N }, (_, i) => ({ body, messageId: `m${i}` })),
      );
      let done = false;
      void sent.then(() => (done = true));
      const seen: number[] = [];
      // A small write to another queue made meanwhile: it queues behind the send, or goes before it.
      const other = s.broker.send("r", { body: "small" });
      while (!done) {
        seen.push((await s.broker.stats("q")).active);
        await new Promise((resolve) => setImmediate(resolve));
      }
      const seqs = await sent;
      assert.equal(seqs.length, N);
      for (let i = 1; i < N; i++) assert.ok(seqs[i]! > seqs[i - 1]!, "sequence numbers in request order");
      assert.ok(seen.length > 0);
      for (const active of seen) assert.ok(active === 0 || active === N, `a read saw ${active} of ${N}`);
      assert.equal((await s.broker.stats("q")).active, N);
      assert.equal((await other).length, 1);
      assert.equal((await s.broker.stats("r")).active, 1);
      const first = await s.broker.peek("q", { max: 1 });
      assert.equal(first[0]?.messageId, "m0");
    });

    it("10.x a CompleteBatch of thousands settles each item; a stale token fails that item alone", async () => {
      await s.broker.send(
        "q",
        Array.from({ length: N }, (_, i) => ({ body: `b${i}` })),
      );
      const locked = await receiveAll(s.broker, "q");
      assert.equal(locked.length, N);
      const items = locked.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken }));
      const stale = N - 10;
      items[stale] = {
        seqNumber: items[stale]!.seqNumber,
        lockToken: "00000000-0000-4000-8000-000000000000",
      };
      const results = await s.broker.completeBatch("q", items);
      assert.equal(results.length, N);
      assert.deepEqual(
        results.flatMap((r, i) => (r.ok ? [] : [i])),
        [stale],
      );
      assert.equal(results[0]!.seqNumber, items[0]!.seqNumber);
      const stats = await s.broker.stats("q");
      assert.equal(stats.total, 1);
      assert.equal(stats.locked, 1);
    });
  });
});
