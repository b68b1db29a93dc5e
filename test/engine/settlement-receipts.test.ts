import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { RECEIPT_TTL_MS } from "../../src/core/receipts.js";
import { openBroker } from "../../src/open.js";
import { tempDir } from "../support/temp.js";

/** The settlement receipts stored in the file: [seq, operation]. */
function receipts(path: string): [number, string][] {
  const db = new Database(path, { readonly: true });
  try {
    return (
      db.prepare("SELECT seq_number, operation FROM settlement_receipts ORDER BY seq_number").all() as {
        seq_number: number;
        operation: string;
      }[]
    ).map((r) => [r.seq_number, r.operation]);
  } finally {
    db.close();
  }
}

// The replay semantics are the conformance suite's (§3.2); this is how the file stores them.
describe("settlement receipts", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("a completion kept as long as a receipt lives writes none: its row answers the replay", async () => {
    const path = tmp.file("receipts.db");
    const clock = new ManualClock();
    const b = await openBroker(path, { background: false, logger: silentLogger, clock });
    try {
      await b.createQueue("q");
      const [kept, brief, deleted, deferred] = await b.send("q", [
        { body: "kept" },
        { body: "brief" },
        { body: "deleted" },
        { body: "deferred" },
      ]);
      const ms = await b.receive("q", { maxMessages: 4 });
      const token = (seq: number) => ms.find((m) => m.seqNumber === seq)!.lockToken!;
      await b.complete("q", kept!, token(kept!), { retainMs: RECEIPT_TTL_MS });
      await b.complete("q", brief!, token(brief!), { retainMs: RECEIPT_TTL_MS - 1 });
      await b.complete("q", deleted!, token(deleted!));
      await b.defer("q", deferred!, token(deferred!));
      assert.deepEqual(receipts(path), [
        [brief, "completed"],
        [deleted, "completed"],
        [deferred, "deferred"],
      ]);
      // The kept row's replay is answered from the row itself.
      await b.complete("q", kept!, token(kept!), { retainMs: RECEIPT_TTL_MS });
      assert.equal(receipts(path).length, 3);
    } finally {
      await b.close();
    }
  });
});
