// Browse and GetMessages read records only up to the one that crosses the 32 MiB answer budget on
// PostgreSQL, as SQLite's iteration does: the query sent every row of the page (a gigabyte for a
// page of 1,000 messages of 1 MiB) before the core cut the answer.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { MessageTooLargeError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import type { RecordRow } from "../../src/core/message-record.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { PgRecordOps } from "../../src/store/postgres/records.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

describe("PostgreSQL: Browse and GetMessages read within the answer budget", () => {
  const schema = freshSchema("mqrecords");
  after(() => dropSchema(schema));

  it("the queries return up to the record that crosses 32 MiB, in either order", async () => {
    const read: number[] = [];
    const spy = <K extends "browse" | "records">(name: K) => {
      const original = PgRecordOps.prototype[name] as (this: PgRecordOps, a: never) => Promise<RecordRow[]>;
      (PgRecordOps.prototype[name] as unknown) = async function (this: PgRecordOps, a: never) {
        const rows = await original.call(this, a);
        read.push(rows.length);
        return rows;
      };
      return () => {
        (PgRecordOps.prototype[name] as unknown) = original;
      };
    };
    const restore = [spy("browse"), spy("records")];
    const b = await PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger });
    try {
      await b.createQueue("q", { lockDurationMs: 60_000 });
      const body = Buffer.alloc(1024 * 1024, 7);
      const seqs: number[] = [];
      for (let i = 0; i < 36; i++) seqs.push(...(await b.send("q", { body })));
      // Settled ones for the "settled" order: the four newest completed and kept.
      for (const m of await b.receive("q", { maxMessages: 4 }))
        await b.complete("q", m.seqNumber, m.lockToken!, { retainMs: 60_000 });

      read.length = 0;
      const newest = await b.browse({ queues: ["q"], limit: 1000 });
      assert.equal(newest.length, 32, "32 MiB: the 32nd record reaches the budget");
      assert.deepEqual(
        newest.map((r) => r.seqNumber),
        seqs.slice(4).reverse(),
      );
      const settled = await b.browse({ queues: ["q"], limit: 1000, order: "settled" });
      assert.equal(settled.length, 32);
      assert.deepEqual(
        settled
          .slice(0, 4)
          .map((r) => r.seqNumber)
          .sort(),
        seqs.slice(0, 4).sort(),
        "settled ones first",
      );
      await assert.rejects(b.getMessages(seqs), MessageTooLargeError);
      assert.equal((await b.getMessages(seqs.slice(0, 10))).length, 10);
      assert.deepEqual(read, [32, 32, 32, 10], "what each query sent");
    } finally {
      for (const r of restore) r();
      await b.close();
    }
  });
});
