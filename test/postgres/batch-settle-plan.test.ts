// The statements given a list of messages (CompleteBatch, RenewBatch, ReceiveDeferred,
// promoteMessages, removeMessages, a redrive of chosen dead letters) reach each of them by primary
// key on PostgreSQL, however stale the planner's statistics: given `queue = … AND state = 'locked'` it read
// every locked row of the queue for each batch when the statistics said few rows were locked (a
// receive of 64 and its CompleteBatch took 68.8 ms with 20,000 messages in flight, 8.2 ms by id).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type pg from "pg";
import type { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { brokerWithAdmin, requirePostgres } from "./pg.js";
import { captureStatements, explainScans } from "./plans.js";

await requirePostgres();

describe("PostgreSQL: statements given a list of messages reach them by primary key", () => {
  // Enough rows (of 200 bytes) that reading them all costs more than 64 lookups by key.
  const LOCKED = 5000;
  const body = (i: number) => `m${i}`.padEnd(200, ".");
  let b: PostgresBroker;
  let admin: pg.Client;
  let close: () => Promise<void>;

  before(async () => {
    ({ broker: b, admin, close } = await brokerWithAdmin("mqplan"));
    await b.createQueue("q");
    // Statistics of an empty table, kept: what a planner sees before autovacuum catches up.
    await admin.query("ALTER TABLE messages SET (autovacuum_enabled = false)");
    await admin.query("ANALYZE messages");
    await b.send(
      "q",
      Array.from({ length: LOCKED + 8 * 64 }, (_, i) => ({ body: body(i) })),
    );
    for (let held = 0; held < LOCKED; )
      held += (await b.receive("q", { maxMessages: Math.min(256, LOCKED - held) })).length;
  });

  after(() => close());

  /** Runs `act`, and asserts that the one statement it sent containing `marker` reads messages by key only. */
  async function assertByKey(marker: string, act: () => Promise<void>): Promise<void> {
    const capture = captureStatements(marker);
    try {
      await act();
    } finally {
      capture.restore();
    }
    assert.equal(capture.seen.length, 1, `one statement containing ${marker}`);
    const { text, values } = capture.seen[0]!;
    const scans = await explainScans(admin, text, values);
    assert.ok(scans.length > 0, "the plan reads messages");
    assert.deepEqual(
      scans.filter((s) => !/^(Index (Only )?Scan|Bitmap Heap Scan) messages_pkey$/.test(s)),
      [],
      `every read of messages goes through its primary key: ${scans.join(", ")}`,
    );
  }

  /** 64 messages received now, as settlement items. */
  async function received(): Promise<{ seqNumber: number; lockToken: string }[]> {
    const batch = await b.receive("q", { maxMessages: 64 });
    assert.equal(batch.length, 64);
    return batch.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken! }));
  }

  /** Asserts that every item of a batch settlement applied. */
  const assertAllApplied = (results: { ok: boolean }[], what: string) =>
    assert.deepEqual(
      results.map((r) => r.ok),
      results.map(() => true),
      what,
    );

  it("CompleteBatch (deleted, kept, and the replay probes of items it missed)", async () => {
    for (const retainMs of [undefined, 60_000]) {
      const items = await received();
      await assertByKey("DELETE FROM messages USING items", async () => {
        const results = await b.completeBatch(
          "q",
          items.map((i) => ({ ...i, retainMs })),
        );
        assert.equal(results.length, 64);
        assertAllApplied(results, "every item completed");
      });
    }
  });

  it("RenewBatch", async () => {
    const items = await received();
    await assertByKey("UPDATE messages SET locked_until", async () => {
      const results = await b.renewBatch("q", items);
      assert.equal(results.length, 64);
      assertAllApplied(results, "every lease renewed");
    });
  });

  it("ReceiveDeferred", async () => {
    const items = await received();
    for (const i of items) await b.defer("q", i.seqNumber, i.lockToken);
    await assertByKey("m.state = 'deferred'", async () => {
      const got = await b.receiveDeferred(
        "q",
        items.map((i) => i.seqNumber),
      );
      assert.equal(got.length, 64, "every deferred message received");
    });
  });

  it("promoteMessages", async () => {
    const seqs = await b.send(
      "q",
      Array.from({ length: 64 }, (_, i) => ({ body: body(i), delayMs: 60_000 })),
    );
    await assertByKey("SET state = 'active', visible_at = $3", async () => {
      assert.equal(await b.promoteMessages("q", seqs), 64);
    });
  });

  it("removeMessages", async () => {
    const seqs = await b.send(
      "q",
      Array.from({ length: 64 }, (_, i) => ({ body: body(i) })),
    );
    await assertByKey("state <> 'locked'", async () => {
      assert.equal(await b.removeMessages("q", seqs), 64);
    });
  });

  it("a redrive of chosen dead letters", async () => {
    const items = await received();
    for (const i of items) await b.reject("q", i.seqNumber, i.lockToken);
    await assertByKey("state = 'dead_lettered' AND ($2::bigint = 0", async () => {
      assert.equal(await b.redrive("q", { seqNumbers: items.map((i) => i.seqNumber) }), 64);
    });
  });
});
