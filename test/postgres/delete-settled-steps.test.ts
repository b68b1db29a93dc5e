// deleteSettled on PostgreSQL deletes DELETE_STEP_ROWS rows a statement, each going on from the
// last number the one before took, and keeps by count the same rows whatever the steps: the newest
// by settlement time, then by number (ties included). Every subject's results on small data:
// test/conformance/cases/job-retention.case.ts. Then the two reads retention by count is built on,
// checked as SQLite's are (test/engine/settled-reads.test.ts).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { DELETE_STEP_ROWS } from "../../src/core/port.js";
import type { Conn } from "../../src/store/postgres/db.js";
import { PgRecordOps } from "../../src/store/postgres/records.js";
import { checkSettledReads, SETTLED_ROWS } from "../support/settled-ops.js";
import { type BrokerWithAdmin, brokerWithAdmin, requirePostgres } from "./pg.js";

await requirePostgres();

describe("PostgreSQL: deleteSettled in steps", () => {
  let pg: BrokerWithAdmin;
  before(async () => {
    pg = await brokerWithAdmin("mqdelsteps");
  });
  after(() => pg.close());

  it(`deletes ${DELETE_STEP_ROWS} a statement and keeps the newest by settlement, then number`, async () => {
    const { broker, admin } = pg;
    await broker.createQueue("q");
    // Rows of two subjects, interleaved, written directly (tens of thousands of completions through
    // the broker would take the test's whole time); four rows share each settlement time.
    const perSubject = 2 * DELETE_STEP_ROWS + 500;
    await admin.query(
      `INSERT INTO messages (queue, state, enqueued_at, body, subject, settled_at)
       SELECT 'q', 'completed', 1, '\\x00'::bytea, CASE WHEN g % 2 = 0 THEN 'a' ELSE 'b' END, 1000 + g / 4
       FROM generate_series(1, $1::int) g`,
      [2 * perSubject],
    );
    const newestA = async (limit: number) =>
      (
        await admin.query<{ id: string }>(
          "SELECT id FROM messages WHERE subject = 'a' ORDER BY settled_at DESC, id DESC LIMIT $1",
          [limit],
        )
      ).rows.map((r) => Number(r.id));
    const kept = await newestA(300);

    const calls: { limit: number; through: number | undefined }[] = [];
    const original = PgRecordOps.prototype.deleteSettled;
    PgRecordOps.prototype.deleteSettled = async function (this: PgRecordOps, a) {
      const done = await original.call(this, a);
      calls.push({ limit: a.limit, through: done.through });
      return done;
    };
    try {
      const n = await broker.deleteSettled("q", { states: ["completed"], subject: "a", keepNewest: 300 });
      assert.equal(n, perSubject - 300);
    } finally {
      PgRecordOps.prototype.deleteSettled = original;
    }
    assert.deepEqual(await newestA(perSubject), kept, "the newest 300 of subject a are the ones left");
    const [b] = (
      await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM messages WHERE subject = 'b'")
    ).rows;
    assert.equal(b?.n, perSubject, "subject b untouched");
    // Two full steps, each going on after the highest number the one before took, then the rest.
    assert.deepEqual(
      calls.map((c) => c.limit),
      [DELETE_STEP_ROWS, DELETE_STEP_ROWS, DELETE_STEP_ROWS],
    );
    assert.ok(calls[0]!.through! < calls[1]!.through!, JSON.stringify(calls));
    assert.equal(calls[2]!.through, undefined, "the step that took fewer is the last");
  });
});

describe("PostgreSQL: the reads of retention by count", () => {
  let pg: BrokerWithAdmin;
  before(async () => {
    pg = await brokerWithAdmin("mqsetreads");
  });
  after(() => pg.close());

  it("keptMark and settledKeys answer as a sort of the rows would", async () => {
    const { broker, admin, schema } = pg;
    await broker.createQueue("q");
    await broker.createQueue("other");
    const ids: number[] = [];
    for (const r of SETTLED_ROWS) {
      const { rows } = await admin.query<{ id: string }>(
        `INSERT INTO messages (queue, state, enqueued_at, body, subject, settled_at)
         VALUES ('q', $1, 0, '\\x'::bytea, $2, $3) RETURNING id`,
        [r.state, r.subject, r.settledAt],
      );
      ids.push(Number(rows[0]!.id));
    }
    const conn: Conn = {
      q: async <R>(text: string, values?: unknown[]) => (await admin.query(text, values)).rows as R[],
      afterCommit: () => {},
      schema,
    };
    await checkSettledReads(new PgRecordOps(conn), ids);
  });
});
