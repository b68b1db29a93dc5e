// A Peek reads messages only up to the one that crosses the 32 MiB answer budget on PostgreSQL as on
// SQLite (test/reliability/peek-budget.test.ts): the query fetched every row up to the count.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import type { MessageRow } from "../../src/core/message-row.js";
import { PgClaimOps } from "../../src/store/postgres/claim.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

const MiB = 1024 * 1024;
const N = 34;

describe("PostgreSQL: a Peek reads within the answer budget", () => {
  const schema = freshSchema("mqpeek");
  after(() => dropSchema(schema));

  it("the query returns up to the message that crosses 32 MiB, in every state or one", async () => {
    const read: number[] = [];
    const peek = PgClaimOps.prototype.peek;
    PgClaimOps.prototype.peek = async function (this: PgClaimOps, a) {
      const rows: MessageRow[] = await peek.call(this, a);
      read.push(rows.length);
      return rows;
    };
    const b = await PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger });
    try {
      await b.createQueue("q");
      const body = Buffer.alloc(MiB, 7);
      const seqs: number[] = [];
      for (let i = 0; i < N; i++) seqs.push(...(await b.send("q", { body, properties: { i: String(i) } })));
      await b.receive("q", { maxMessages: 1 });
      const all = await b.peek("q", { max: 1000 });
      assert.deepEqual(
        all.map((m) => m.seqNumber),
        seqs.slice(0, 32),
      );
      assert.equal(all[0]!.state, "locked");
      assert.equal(all[1]!.body.length, MiB);
      assert.deepEqual(read, [32], "the rows after it were never fetched");
      const active = await b.peek("q", { max: 1000, state: "active", fromSeq: seqs[1] });
      assert.deepEqual(
        active.map((m) => m.seqNumber),
        seqs.slice(1, 33),
      );
      assert.deepEqual(read, [32, 32]);
      const few = await b.peek("q", { max: 3, fromSeq: seqs[10] });
      assert.deepEqual(
        few.map((m) => m.seqNumber),
        seqs.slice(10, 13),
      );
    } finally {
      PgClaimOps.prototype.peek = peek;
      await b.close();
    }
  });
});
