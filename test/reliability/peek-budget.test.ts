// A Peek reads messages only up to the one that crosses the 32 MiB answer budget: with 1 MiB
// messages, a Peek of 1,000 read every one of them (a gigabyte for a full page) before the answer
// was cut to 32 MiB.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import type { MessageRow } from "../../src/core/message-row.js";
import { openBroker } from "../../src/open.js";
import { SqliteClaimOps } from "../../src/store/sqlite/claim.js";
import { tempDir } from "../support/temp.js";

const MiB = 1024 * 1024;
const N = 40;

describe("reliability: a Peek reads within the answer budget", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("the store reads up to the message that crosses 32 MiB, in every state or one", async () => {
    const read: number[] = [];
    const peek = SqliteClaimOps.prototype.peek;
    SqliteClaimOps.prototype.peek = function (this: SqliteClaimOps, a) {
      const rows: MessageRow[] = peek.call(this, a);
      read.push(rows.length);
      return rows;
    };
    const b = await openBroker(tmp.file("peek.db"), {
      background: false,
      logger: silentLogger,
      synchronous: "off",
    });
    try {
      await b.createQueue("q");
      const body = Buffer.alloc(MiB, 7);
      const seqs: number[] = [];
      for (let i = 0; i < N; i++) seqs.push(...(await b.send("q", { body, properties: { i: String(i) } })));
      // Two of them locked: a peek of every state merges the states in sequence order.
      await b.receive("q", { maxMessages: 1 });
      const all = await b.peek("q", { max: 1000 });
      assert.equal(all.length, 32, "32 MiB and a little properties: the 32nd crosses the budget");
      assert.deepEqual(
        all.map((m) => m.seqNumber),
        seqs.slice(0, 32),
      );
      assert.equal(all[0]!.state, "locked");
      assert.deepEqual(read, [32], "the rows after it were never read");
      const active = await b.peek("q", { max: 1000, state: "active", fromSeq: seqs[5] });
      assert.deepEqual(
        active.map((m) => m.seqNumber),
        seqs.slice(5, 37),
      );
      assert.deepEqual(read, [32, 32]);
      const few = await b.peek("q", { max: 3, fromSeq: seqs[10] });
      assert.deepEqual(
        few.map((m) => m.seqNumber),
        seqs.slice(10, 13),
        "the count first",
      );
    } finally {
      SqliteClaimOps.prototype.peek = peek;
      await b.close();
    }
  });
});
