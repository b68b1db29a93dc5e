import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import type { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";
import { staleQueueRow } from "./stale-queue-row.js";

/** Counts the broker's write transactions (each flush of its writer is one). */
function countTransactions(b: SqliteBroker): () => number {
  const writer = (b as unknown as { writer: { flush(): void } }).writer;
  const flush = writer.flush.bind(writer);
  let n = 0;
  writer.flush = () => {
    n++;
    flush();
  };
  return () => n;
}

/** Records the `max` of every claim made inside the broker's next write transaction. */
function spyClaimsOfNextTransaction(b: SqliteBroker): number[] {
  const transactions = countTransactions(b);
  const ops = (b as unknown as { claimOps: { claim(a: { max: number }): unknown } }).claimOps;
  const claim = ops.claim.bind(ops);
  const maxes: number[] = [];
  ops.claim = (a: { max: number }) => {
    if (transactions() === 1) maxes.push(a.max);
    return claim(a);
  };
  return maxes;
}

async function broker() {
  const b = await openBroker(":memory:", { background: false, logger: silentLogger });
  await b.createQueue("q");
  await b.createQueue("r");
  return b;
}

/** Lets a long-poll park (its claims found nothing). */
const parked = () => sleep(30);

describe("hand-off: a send claims for a parked receiver inside its own transaction", () => {
  it("a handed-off body that is a small view of a large buffer is the receiver's own copy", async () => {
    const b = await broker();
    const large = Buffer.alloc(4 * 1024 * 1024, 7);
    const view = large.subarray(1000, 1000 + 2400);
    const own = Buffer.from("whole bytes of its own");
    const waiting = b.receive("q", { waitMs: 5000, maxMessages: 2 });
    await parked();
    await b.send("q", [{ body: view }, { body: own }]);
    const got = await waiting;
    assert.equal(got.length, 2, "both handed over");
    assert.deepEqual(got[0]!.body, view);
    assert.notEqual(got[0]!.body.buffer, large.buffer, "the 4 MiB buffer is not kept by the message");
    assert.equal(got[1]!.body, own, "a body that is its buffer's own bytes is handed over as it is");
    await b.close();
  });

  it("a parked receive gets the message from the send's transaction, with no transaction of its own", async () => {
    const b = await broker();
    const waiting = b.receive("q", { waitMs: 5000 });
    await parked();
    const transactions = countTransactions(b);
    await b.send("q", { body: "hello" });
    const [m] = await waiting;
    assert.equal(transactions(), 1);
    assert.equal(m?.body.toString(), "hello");
    assert.equal(m?.deliveryCount, 1);
    assert.ok(m?.lockToken);
    assert.deepEqual(
      (await b.peek("q")).map((p) => p.state),
      ["locked"],
    );
    await b.complete("q", m!.seqNumber, m!.lockToken!);
    await b.close();
  });

  for (const how of ["receive", "receiveAny of one queue"] as const) {
    it(`${how}: a send's own statement stores the rows locked for it, with no claim`, async () => {
      const b = await broker();
      const park = (waitMs: number) =>
        how === "receive"
          ? b.receive("q", { waitMs, maxMessages: 10 })
          : b.receiveAny(["q"], { waitMs, maxMessages: 10 });
      await b.send("q", { body: "caches the queue's row" });
      await b.receive("q", { mode: "receive-and-delete" });
      const first = park(5000);
      const second = park(300);
      await parked();
      const claims = spyClaimsOfNextTransaction(b);
      await b.send("q", [{ body: "a" }, { body: "b" }]);
      const got = await first;
      assert.deepEqual(
        got.map((m) => [m.body.toString(), m.deliveryCount]),
        [
          ["a", 1],
          ["b", 1],
        ],
      );
      assert.deepEqual(claims, []);
      assert.deepEqual(await second, []);
      assert.deepEqual(
        (await b.peek("q")).map((p) => [p.state, p.lockToken === undefined]),
        [
          ["locked", true],
          ["locked", true],
        ],
      );
      // Counted as locked when stored: Stats' kept counts agree with the rows.
      const stats = await b.stats("q");
      assert.equal(stats.locked, 2);
      assert.equal(stats.active, 0);
      for (const m of got) await b.complete("q", m.seqNumber, m.lockToken!);
      await b.close();
    });

    it(`${how}: a hand-off in a transaction's commit claims no more than it made claimable, and asks no one past them`, async () => {
      const b = await broker();
      const park = (waitMs: number) =>
        how === "receive"
          ? b.receive("q", { waitMs, maxMessages: 10 })
          : b.receiveAny(["q"], { waitMs, maxMessages: 10 });
      const first = park(5000);
      const second = park(300);
      await parked();
      const claims = spyClaimsOfNextTransaction(b);
      await b.tx((t) => t.send("q", [{ body: "a" }, { body: "b" }]));
      assert.deepEqual(
        (await first).map((m) => m.body.toString()),
        ["a", "b"],
      );
      // In the send's transaction, one claim of at most the two rows sent (a claim past them would
      // only find nothing), and the second receiver is not asked: nothing is left for it. (Woken
      // after the commit, it looks once more in a transaction of its own.)
      assert.deepEqual(claims, [2]);
      assert.deepEqual(await second, []);
      await b.close();
    });
  }

  it("a parked receive is handed no more than its max_bytes (the message that crosses it the last)", async () => {
    const b = await broker();
    await b.send("q", { body: "caches the queue's row" });
    await b.receive("q", { mode: "receive-and-delete" });
    const waiting = b.receive("q", { waitMs: 5000, maxMessages: 10, maxBytes: 150 });
    await parked();
    await b.send(
      "q",
      ["a", "b", "c"].map((c) => ({ body: c.repeat(100) })),
    );
    assert.deepEqual(
      (await waiting).map((m) => m.body.toString()[0]),
      ["a", "b"],
    );
    assert.deepEqual(
      (await b.peek("q")).map((p) => p.state),
      ["locked", "locked", "active"],
    );
    await b.close();
  });

  /**
   * A receiver parked on "q" (whose row the broker has cached), then an active row of `priority`
   * stored by the application's own SQL (no one announces it: the receiver is not woken), then a
   * send of `sent`; what the receiver gets.
   */
  async function olderRowThenSend(priority: number, sent: { body: string; priority?: number }) {
    const b = await broker();
    await b.send("q", { body: "caches the queue's row" });
    await b.receive("q", { mode: "receive-and-delete" });
    const waiting = b.receive("q", { waitMs: 5000, maxMessages: 10 });
    await parked();
    await b.tx((t) => {
      t.db
        .prepare(
          "INSERT INTO messages (queue, state, priority, enqueued_at, visible_at, body) VALUES ('q', 'active', ?, ?, ?, ?)",
        )
        .run(priority, Date.now(), Date.now(), Buffer.from(`older, priority ${priority}`));
    });
    await b.send("q", sent);
    const got = (await waiting).map((m) => m.body.toString());
    await b.close();
    return got;
  }

  it("a send hands nothing over while an older claimable row would come first", async () => {
    assert.deepEqual(await olderRowThenSend(0, { body: "newer" }), ["older, priority 0", "newer"]);
  });

  it("a send hands its rows over when the older claimable rows have a lower priority", async () => {
    assert.deepEqual(await olderRowThenSend(3, { body: "newer, priority 5", priority: 5 }), [
      "newer, priority 5",
    ]);
  });

  it("an older row its group holds back does not stop the hand-off (the claim would skip it too)", async () => {
    const b = await broker();
    await b.send("q", { body: "caches the queue's row" });
    await b.receive("q", { mode: "receive-and-delete" });
    // A group whose first message is locked: its second waits behind it, active but not claimable.
    await b.send("q", [
      { body: "g1", groupId: "g" },
      { body: "g2", groupId: "g" },
    ]);
    const [first] = await b.receive("q");
    assert.equal(first?.body.toString(), "g1");
    const waiting = b.receive("q", { waitMs: 5000, maxMessages: 10 });
    await parked();
    const transactions = countTransactions(b);
    await b.send("q", { body: "newer" });
    assert.deepEqual(
      (await waiting).map((m) => m.body.toString()),
      ["newer"],
    );
    assert.equal(transactions(), 1, "the send's own transaction handed it over: no claim of the receiver's");
    assert.deepEqual(
      (await b.peek("q")).map((m) => `${m.body}:${m.state}`),
      ["g1:locked", "g2:active", "newer:locked"],
    );
    await b.close();
  });

  it("a send whose cached queue row another connection changed before its transaction goes the long way", async () => {
    const { b, changeConfig, close } = await staleQueueRow();
    // The send reads the cached row now; its transaction begins on a later turn, after the change.
    const sent = b.send("q", { body: "x" });
    changeConfig();
    const [seq] = await sent;
    const [m] = await b.peek("q");
    assert.equal(m?.seqNumber, seq);
    assert.ok(m?.expiresAt !== undefined && m.expiresAt > Date.now(), "the new config's TTL applies");
    await close();
  });

  it("takes at most max_messages; the rest stay active for others", async () => {
    const b = await broker();
    const waiting = b.receive("q", { waitMs: 5000, maxMessages: 2 });
    await parked();
    await b.send(
      "q",
      ["a", "b", "c", "d", "e"].map((body) => ({ body })),
    );
    const got = await waiting;
    assert.deepEqual(
      got.map((m) => m.body.toString()),
      ["a", "b"],
    );
    assert.deepEqual(
      (await b.peek("q")).map((p) => p.state),
      ["locked", "locked", "active", "active", "active"],
    );
    await b.close();
  });

  it("two parked receivers: one message goes to exactly one, in the order they parked", async () => {
    const b = await broker();
    const first = b.receive("q", { waitMs: 5000 });
    await parked();
    const second = b.receive("q", { waitMs: 300 });
    await parked();
    await b.send("q", { body: "only" });
    const [one, two] = await Promise.all([first, second]);
    assert.deepEqual(
      one.map((m) => m.body.toString()),
      ["only"],
    );
    assert.deepEqual(two, []);
    await b.close();
  });

  it("receive-and-delete through a hand-off deletes the message", async () => {
    const b = await broker();
    const waiting = b.receive("q", { waitMs: 5000, mode: "receive-and-delete" });
    await parked();
    await b.send("q", { body: "gone" });
    const [m] = await waiting;
    assert.equal(m?.body.toString(), "gone");
    assert.deepEqual(await b.peek("q"), []);
    await b.close();
  });

  it("receiveAny over two queues is handed messages once, however many of its queues the send filled", async () => {
    const b = await broker();
    const waiting = b.receiveAny(["q", "r"], { waitMs: 5000, maxMessages: 10 });
    await parked();
    const transactions = countTransactions(b);
    await b.tx((t) => {
      t.send("q", { body: "to q" });
      t.send("r", { body: "to r" });
    });
    const got = await waiting;
    assert.equal(transactions(), 1);
    assert.deepEqual(
      got.map((m) => [m.queue, m.body.toString()]),
      [
        ["q", "to q"],
        ["r", "to r"],
      ],
    );
    await b.close();
  });

  it("an aborted long-poll is handed nothing: the message stays active", async () => {
    const b = await broker();
    const abort = new AbortController();
    const waiting = b.receive("q", { waitMs: 5000, signal: abort.signal });
    await parked();
    abort.abort();
    await b.send("q", { body: "for someone else" });
    assert.deepEqual(await waiting, []);
    assert.deepEqual(
      (await b.peek("q")).map((p) => p.state),
      ["active"],
    );
    await b.close();
  });

  it("an abandoned message is handed to a parked receiver", async () => {
    const b = await broker();
    await b.send("q", { body: "again" });
    const [m] = await b.receive("q");
    const waiting = b.receive("q", { waitMs: 5000 });
    await parked();
    await b.abandon("q", m!.seqNumber, m!.lockToken!);
    const [again] = await waiting;
    assert.equal(again?.seqNumber, m!.seqNumber);
    assert.equal(again?.deliveryCount, 2);
    await b.close();
  });

  it("abandons made together hand every message to a receiver asking for them all", async () => {
    const b = await broker();
    await b.send("q", [{ body: "a" }, { body: "b" }, { body: "c" }]);
    const got = await b.receive("q", { maxMessages: 3 });
    const waiting = b.receive("q", { waitMs: 5000, maxMessages: 3 });
    await parked();
    const transactions = countTransactions(b);
    // One group: each abandon makes one message claimable, each at its own time.
    await Promise.all(got.map((m) => b.abandon("q", m.seqNumber, m.lockToken!)));
    const again = await waiting;
    assert.equal(transactions(), 1, "the abandons and the hand-off share one transaction");
    assert.deepEqual(
      again.map((m) => [m.body.toString(), m.deliveryCount]),
      [
        ["a", 2],
        ["b", 2],
        ["c", 2],
      ],
    );
    await b.close();
  });
});
