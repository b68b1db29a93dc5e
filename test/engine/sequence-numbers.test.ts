import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { GroupRequiredError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { SEQUENCE_BLOCK, SequenceNumbers } from "../../src/store/sqlite/sequence-numbers.js";
import { tempDir } from "../support/temp.js";

const quiet = { background: false, logger: silentLogger } as const;

/** The stored reservation: the highest sequence number anyone may have handed out. */
function reserved(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return (
      db.prepare("SELECT reserved FROM sequences WHERE name = 'messages'").get() as { reserved: number }
    ).reserved;
  } finally {
    db.close();
  }
}

/** The pages of the file's WAL frames in the order written (those of its current salt only). */
function walPages(path: string): number[] {
  const wal = readFileSync(`${path}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const salt = wal.subarray(16, 24);
  const pages: number[] = [];
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (!wal.subarray(at + 8, at + 16).equals(salt)) break;
    pages.push(wal.readUInt32BE(at));
  }
  return pages;
}

const increasing = (seqs: number[]) => seqs.every((s, i) => i === 0 || s > seqs[i - 1]!);

// Sequence numbers come from blocks reserved in the file (one write per block, not per insert).
describe("sequence numbers", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("are consecutive within a block, which is written once, not per insert", async () => {
    const path = tmp.file("block.db");
    const b = await openBroker(path, quiet);
    await b.createQueue("q");
    const [first] = await b.send("q", { body: "1" });
    const afterFirst = reserved(path);
    assert.ok(afterFirst >= first! + SEQUENCE_BLOCK - 1, `reserved ${afterFirst} after id ${first}`);
    const seqs = [first!];
    for (let i = 0; i < 20; i++) seqs.push(...(await b.send("q", [{ body: "a" }, { body: "b" }])));
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => first! + i),
    );
    assert.equal(reserved(path), afterFirst, "the reservation was written again inside its block");
    await b.close();
  });

  it("go on past a block's end, and a clean close gives the unused rest back", async () => {
    const path = tmp.file("close.db");
    const a = await openBroker(path, quiet);
    await a.createQueue("q");
    const seqs: number[] = [];
    for (let i = 0; i < SEQUENCE_BLOCK * 2 + 10; i += 100) {
      seqs.push(
        ...(await a.send(
          "q",
          Array.from({ length: 100 }, () => ({ body: "x" })),
        )),
      );
    }
    assert.ok(increasing(seqs));
    assert.equal(new Set(seqs).size, seqs.length);
    const last = seqs[seqs.length - 1]!;
    await a.close();
    assert.equal(reserved(path), last);

    // The newest message deleted: its number is still not handed out again.
    const b = await openBroker(path, quiet);
    await b.purge("q");
    const [next] = await b.send("q", { body: "after" });
    assert.equal(next, last + 1);
    await b.close();
  });

  it("stay unique and increasing in commit order when two connections send to one file", async () => {
    const path = tmp.file("two.db");
    const a = await openBroker(path, quiet);
    await a.createQueue("q");
    const b = await openBroker(path, quiet);
    const seqs: number[] = [];
    for (let i = 0; i < 30; i++) {
      const sender = i % 3 === 0 ? b : a;
      seqs.push(...(await sender.send("q", [{ body: `${i}a` }, { body: `${i}b` }])));
      // The newest message completed (deleted) now and then: its number is gone for both.
      if (i % 4 === 0) {
        const [m] = await sender.receive("q");
        await sender.complete("q", m!.seqNumber, m!.lockToken!);
        if (i % 8 === 0) await sender.purge("q");
      }
    }
    assert.ok(increasing(seqs), `not increasing: ${seqs.join(",")}`);
    await a.close();
    await b.close();
    // Both gave back what they could: the file's reservation is not below any number handed out.
    assert.ok(reserved(path) >= Math.max(...seqs));
  });

  it("of the topic log increase with publish order across a reopen and a second connection", async () => {
    const path = tmp.file("topic.db");
    const a = await openBroker(path, quiet);
    await a.subscribeLog("t", "reader");
    const publish = async (broker: typeof a, n: number) => {
      for (let i = 0; i < n; i++) await broker.publish("t", { body: `${i}` });
    };
    await publish(a, 3);
    const b = await openBroker(path, quiet);
    await publish(b, 2);
    await publish(a, 2);
    await a.close();
    await b.close();
    const c = await openBroker(path, quiet);
    await publish(c, 2);
    const ids = (await c.readTopic("t", "reader", { limit: 100 })).map((m) => m.id);
    assert.equal(ids.length, 9);
    assert.ok(increasing(ids), `not increasing: ${ids.join(",")}`);
    // Both closed cleanly, so the reopened file went on from the last id handed out.
    assert.equal(ids[8], ids[7]! + 1);
    await c.close();
  });

  it("taken by writes that fail or roll back are not kept, and the next writes go on unique", async () => {
    const path = tmp.file("rollback.db");
    const b = await openBroker(path, quiet);
    await b.createQueue("q");
    await b.createQueue("groups", { orderingMode: "group_fifo" });
    // One commit group: a failing send (no group id for a group_fifo queue) between good ones.
    const results = await Promise.allSettled([
      b.send("q", { body: "1" }),
      b.send("groups", { body: "no group" }),
      b.send("q", [{ body: "2" }, { body: "3" }]),
    ]);
    assert.equal(results[0]!.status, "fulfilled");
    assert.ok(results[1]!.status === "rejected" && results[1].reason instanceof GroupRequiredError);
    assert.equal(results[2]!.status, "fulfilled");
    // A transaction rolled back as a whole.
    await assert.rejects(
      b.tx((t) => {
        t.send("q", [{ body: "never" }, { body: "stored" }]);
        throw new Error("undo");
      }),
      /undo/,
    );
    const later = await b.send("q", [{ body: "4" }, { body: "5" }]);
    const stored = (await b.peek("q", { max: 10 })).map((m) => [m.seqNumber, m.body.toString()]);
    assert.deepEqual(
      stored.map(([, body]) => body),
      ["1", "2", "3", "4", "5"],
    );
    const seqs = stored.map(([s]) => s as number);
    assert.ok(increasing(seqs));
    assert.deepEqual(seqs.slice(3), later);
    // The failures gave up only the numbers they took, not the rest of the block.
    assert.ok(later[0]! - seqs[2]! <= 3, `a failure cost a block: ${seqs.join(",")}`);
    await b.close();
  });

  it("are reserved in the file by the commit that uses them, not when taken", async () => {
    const path = tmp.file("deferred.db");
    await (await openBroker(path, quiet)).close();
    const db = new Database(path);
    const ids = new SequenceNumbers(db, "messages");
    const stored = () => db.prepare("SELECT reserved FROM sequences WHERE name = 'messages'").pluck().get();
    db.exec("BEGIN IMMEDIATE");
    ids.began();
    const first = ids.take(3);
    assert.equal(stored(), first - 1, "written when taken");
    ids.flush();
    assert.equal(stored(), first + 2 + SEQUENCE_BLOCK);
    db.exec("COMMIT");
    db.close();
  });

  it("of a block reserved by a transaction that rolled back are not used once another connection reserved", async () => {
    const path = tmp.file("undone-block.db");
    const a = await openBroker(path, quiet);
    await a.createQueue("q");
    const b = await openBroker(path, quiet);
    // a's first block is reserved inside a transaction that rolls back: it was never stored.
    await assert.rejects(
      a.tx((t) => {
        t.send("q", [{ body: "never" }, { body: "stored" }]);
        throw new Error("undo");
      }),
      /undo/,
    );
    // b's block covers the numbers a had taken: a must not take them again.
    const seqs = [
      ...(await b.send(
        "q",
        [1, 2, 3, 4, 5].map((i) => ({ body: `b${i}` })),
      )),
    ];
    seqs.push(...(await a.send("q", { body: "a1" })));
    seqs.push(...(await b.send("q", { body: "b6" })));
    seqs.push(...(await a.send("q", { body: "a2" })));
    assert.ok(increasing(seqs), `not increasing in commit order: ${seqs.join(",")}`);
    await a.close();
    await b.close();
  });

  // Written when taken, the reservation of a long write's second block changed the sequences page
  // after the page cache had spilled it to the WAL: SQLite rewrote that early frame in place and,
  // at the commit, recomputed the checksum of every frame after it (20-50 ms on the event loop).
  it("of a long write are stored with its commit, after the rows' spilled pages", async () => {
    const path = tmp.file("long.db");
    const b = await openBroker(path, { ...quiet, checkpointThread: false });
    await b.createQueue("q");
    const body = "x".repeat(3000); // a page of its own per row: the write spills as it goes
    const seqs = await b.send(
      "q",
      Array.from({ length: 3 * SEQUENCE_BLOCK }, (_, i) => ({ body, messageId: `m${i}` })),
    );
    assert.equal(seqs.length, 3 * SEQUENCE_BLOCK);
    const db = new Database(path, { readonly: true });
    const page = db.prepare("SELECT pageno FROM dbstat WHERE name = 'sequences'").pluck().get() as number;
    db.close();
    const pages = walPages(path);
    assert.ok(pages.length > 3 * SEQUENCE_BLOCK, `${pages.length} frames`);
    const at = pages.lastIndexOf(page);
    assert.ok(
      at > pages.length / 2,
      `the sequences page is frame ${at} of ${pages.length}: written early and rewritten in place`,
    );
    assert.ok(reserved(path) >= seqs[seqs.length - 1]!);
    await b.close();
  });
});
