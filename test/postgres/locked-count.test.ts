// A claim gated by `maxLocked` (a task's `maxConcurrent`) counts the subject's locked messages
// through the lease index, which holds the locked rows alone: PostgreSQL has no index of the
// locked rows by subject (migration 8), which cost every claim an index entry.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type pg from "pg";
import type { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { brokerWithAdmin, requirePostgres } from "./pg.js";
import { captureStatements, explainScans } from "./plans.js";

await requirePostgres();

describe("PostgreSQL: a subject's locked messages are counted through the lease index", () => {
  let b: PostgresBroker;
  let admin: pg.Client;
  let schema: string;
  let close: () => Promise<void>;

  before(async () => {
    ({ broker: b, admin, schema, close } = await brokerWithAdmin("mqlock"));
  });
  after(() => close());

  it("caps the claim at the subject's room, counted across queues, reading the lease index", async () => {
    await b.createQueue("a");
    await b.createQueue("b");
    // Many waiting messages of the gated subject and of another, few locked.
    const body = "x".repeat(200);
    for (const queue of ["a", "b"])
      await b.send(
        queue,
        Array.from({ length: 3000 }, (_, i) => ({ body, subject: i % 2 === 0 ? "capped" : "free" })),
      );
    const locked = [
      ...(await b.receive("a", { maxMessages: 6 })), // 3 capped, 3 free
      ...(await b.receive("b", { maxMessages: 4 })), // 2 capped, 2 free
    ];
    assert.equal(locked.filter((m) => m.subject === "capped").length, 5);
    await admin.query("ANALYZE messages");

    const capture = captureStatements("count(*)");
    let got: Awaited<ReturnType<PostgresBroker["receiveAny"]>>;
    try {
      got = await b.receiveAny(["a"], { maxMessages: 20, gates: [{ subject: "capped", maxLocked: 8 }] });
    } finally {
      capture.restore();
    }
    // Room for 3 more capped messages; the free ones between them are claimed as they come.
    assert.equal(got.filter((m) => m.subject === "capped").length, 3);
    assert.equal(got.length, 20);

    assert.equal(capture.seen.length, 1, "one count of the subject's locked messages");
    const { text, values } = capture.seen[0]!;
    assert.deepEqual(await explainScans(admin, text, values), ["Index Scan idx_msg_lease"]);
    const { rows } = await admin.query(
      "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname = 'idx_msg_locked_subject'",
      [schema],
    );
    assert.deepEqual(rows, [], "no index of the locked rows by subject");
  });
});
