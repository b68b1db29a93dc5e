import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GroupRequiredError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { openBroker } from "../../src/open.js";

// A batch sent to a plain queue is stored with multi-row INSERTs (64 rows a statement) unless a
// message needs a check of its own first; either way each message gets its own row and seq.
describe("send: batches", () => {
  const open = async () => {
    const clock = new ManualClock(1_000_000);
    const b = await openBroker(":memory:", { background: false, logger: silentLogger, clock });
    return { b, clock };
  };

  it("a batch over several statements answers each message's seq, in order, matching what is stored", async () => {
    const { b } = await open();
    await b.createQueue("q");
    const bodies = Array.from({ length: 200 }, (_, i) => `m${i}`);
    const seqs = await b.send(
      "q",
      bodies.map((body) => ({ body })),
    );
    assert.equal(new Set(seqs).size, 200);
    const stored = await b.receive("q", { maxMessages: 256 });
    assert.deepEqual(
      stored.map((m) => [m.seqNumber, m.body.toString()]),
      seqs.map((s, i) => [s, bodies[i]]),
    );
    // A later batch continues the sequence.
    const [next] = await b.send("q", [{ body: "a" }, { body: "b" }]);
    assert.ok(next! > seqs[199]!);
    await b.close();
  });

  it("each row keeps its own fields, delay, TTL and state", async () => {
    const { b, clock } = await open();
    await b.createQueue("q", { defaultTtlMs: 60_000 });
    const now = clock.now();
    const seqs = await b.send(
      "q",
      [
        { body: "plain" },
        { body: "later", delayMs: 5000, subject: "s", properties: { k: "v" }, priority: 3 },
        { body: "meta", messageId: "id-1", correlationId: "c", contentType: "text/plain" },
      ],
      { ttlMs: 10_000 },
    );
    const rows = await b.peek("q", { max: 10 });
    const bySeq = new Map(rows.map((m) => [m.seqNumber, m]));
    const plain = bySeq.get(seqs[0]!)!;
    const later = bySeq.get(seqs[1]!)!;
    const meta = bySeq.get(seqs[2]!)!;
    assert.equal(plain.state, "active");
    assert.equal(plain.expiresAt, now + 10_000);
    assert.equal(later.state, "scheduled");
    assert.equal(later.visibleAt, now + 5000);
    assert.equal(later.expiresAt, now + 5000 + 10_000);
    assert.deepEqual([later.subject, later.properties, later.priority], ["s", { k: "v" }, 3]);
    assert.deepEqual([meta.messageId, meta.correlationId, meta.contentType], ["id-1", "c", "text/plain"]);
    await b.close();
  });

  it("a strict_fifo batch stores no priority", async () => {
    const { b } = await open();
    await b.createQueue("strict", { orderingMode: "strict_fifo" });
    await b.send("strict", [
      { body: "a", priority: 9 },
      { body: "b", priority: 1 },
    ]);
    const got = await b.receive("strict", { maxMessages: 1 });
    assert.equal(got[0]?.body.toString(), "a");
    assert.deepEqual(
      (await b.peek("strict", { max: 10 })).map((m) => m.priority ?? 0),
      [0, 0],
    );
    await b.close();
  });

  it("a batch with a unique key or on a dedup queue is checked message by message", async () => {
    const { b } = await open();
    await b.createQueue("q");
    await b.createQueue("dedup", { dedupWindowMs: 60_000 });
    const [first, again, other] = await b.send("q", [
      { body: "a", uniqueKey: "k" },
      { body: "b", uniqueKey: "k" },
      { body: "c" },
    ]);
    assert.equal(again, first, "the live key answers with the existing message");
    assert.notEqual(other, first);
    const [d1, d2] = await b.send("dedup", [
      { body: "x", messageId: "m" },
      { body: "x", messageId: "m" },
    ]);
    assert.equal(d2, d1);
    assert.equal((await b.stats("dedup")).active, 1);
    await b.close();
  });

  it("a group_fifo batch with a message missing its group is group_required and stores nothing", async () => {
    const { b } = await open();
    await b.createQueue("g", { orderingMode: "group_fifo" });
    await assert.rejects(
      b.send("g", [{ body: "a", groupId: "x" }, { body: "b" }]),
      (err: unknown) => err instanceof GroupRequiredError,
    );
    assert.equal((await b.stats("g")).active, 0);
    await b.send("g", [
      { body: "a", groupId: "x" },
      { body: "b", groupId: "y" },
    ]);
    assert.equal((await b.stats("g")).active, 2);
    await b.close();
  });
});
