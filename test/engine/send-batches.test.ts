import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import { MAX_BATCHED_MESSAGES } from "../../src/core/send-batches.js";
import { openBroker } from "../../src/open.js";
import type { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";
import { staleQueueRow } from "./stale-queue-row.js";

/** The ids stored by each write of plain sends (one `SendOps.insertFresh` call each; SQLite inserts 64 rows a statement). */
function spyWrites(b: Broker): number[][] {
  const send = (b as unknown as { ops: { send: { insertFresh(q: unknown, rows: unknown[]): unknown } } }).ops
    .send;
  const insertFresh = send.insertFresh.bind(send);
  const writes: number[][] = [];
  send.insertFresh = (q: unknown, rows: unknown[], ...rest: unknown[]) => {
    const out = (insertFresh as (...a: unknown[]) => { ids: number[] } | undefined)(q, rows, ...rest);
    writes.push(out ? out.ids : []);
    return out;
  };
  return writes;
}

async function broker() {
  const b = await openBroker(":memory:", { background: false, logger: silentLogger });
  await b.createQueue("q");
  await b.createQueue("r");
  // The queues' rows are cached by a first send, as a running broker's are.
  await b.send("q", { body: "warm" });
  await b.send("r", { body: "warm" });
  await b.receive("q", { mode: "receive-and-delete" });
  await b.receive("r", { mode: "receive-and-delete" });
  return b;
}

const bodies = async (b: Broker, queue: string) =>
  (await b.peek(queue, { max: 1000 })).map((m) => [m.seqNumber, m.body.toString()]);

// Plain sends to one queue made while the previous one waits for the writer are stored together
// (core/send-batches.ts): one write, their rows inserted together.
describe("send batches: concurrent sends written together", () => {
  it("concurrent sends to one queue are one write; each send gets its own seqs, in call order", async () => {
    const b = await broker();
    const writes = spyWrites(b);
    const sends = Array.from({ length: 16 }, (_, i) =>
      b.send("q", i % 4 === 0 ? [{ body: `${i}a` }, { body: `${i}b` }] : { body: `${i}` }),
    );
    const answers = await Promise.all(sends);
    assert.equal(writes.length, 1, "one write");
    assert.deepEqual(answers.flat(), writes[0], "each send answered its own rows, in call order");
    assert.deepEqual(
      await bodies(b, "q"),
      answers.flatMap((seqs, i) =>
        i % 4 === 0
          ? [
              [seqs[0], `${i}a`],
              [seqs[1], `${i}b`],
            ]
          : [[seqs[0], `${i}`]],
      ),
    );
    await b.close();
  });

  it("a write queued between two sends closes the batch: the later send is stored after it", async () => {
    const b = await broker();
    const writes = spyWrites(b);
    const first = b.send("q", { body: "before" });
    // A change of the queue's config: a send stored after it takes the new TTL.
    const changed = b.createQueue("q", { defaultTtlMs: 60_000 });
    const second = b.send("q", { body: "after" });
    const [[seq1], , [seq2]] = await Promise.all([first, changed, second]);
    assert.equal(writes.length, 2, "two writes");
    assert.ok(seq2! > seq1!);
    const rows = await b.peek("q");
    assert.deepEqual(
      rows.map((m) => [m.seqNumber, m.body.toString(), m.expiresAt !== undefined]),
      [
        [seq1, "before", false],
        [seq2, "after", true],
      ],
    );
    await b.close();
  });

  it("a transaction between two sends closes the batch: sequence numbers follow the calls", async () => {
    const b = (await broker()) as SqliteBroker;
    const first = b.send("q", { body: "1" });
    const inTx = b.tx((t) => t.send("q", { body: "2" }));
    const third = b.send("q", { body: "3" });
    const [[s1], [s2], [s3]] = await Promise.all([first, inTx, third]);
    assert.ok(s1! < s2! && s2! < s3!, `${s1} < ${s2} < ${s3}`);
    await b.close();
  });

  it("sends to another queue, or with another delivery time or TTL, are not joined", async () => {
    const b = await broker();
    const writes = spyWrites(b);
    const later = Date.now() + 60_000;
    const [[plain], [scheduled], [ttl], [other]] = await Promise.all([
      b.send("q", { body: "now" }),
      b.schedule("q", { body: "later" }, later),
      b.send("q", { body: "ttl" }, { ttlMs: 30_000 }),
      b.send("r", { body: "r" }),
    ]);
    assert.equal(writes.length, 4);
    const rows = new Map((await b.peek("q", { max: 10 })).map((m) => [m.seqNumber, m]));
    assert.equal(rows.get(plain!)?.state, "active");
    assert.equal(rows.get(scheduled!)?.state, "scheduled");
    assert.ok((rows.get(ttl!)?.expiresAt ?? 0) > Date.now(), "the TTL applies to its own send only");
    assert.equal(rows.get(plain!)?.expiresAt, undefined);
    assert.deepEqual(await bodies(b, "r"), [[other, "r"]]);
    await b.close();
  });

  it(`a batch takes at most ${MAX_BATCHED_MESSAGES} messages; the next sends start another`, async () => {
    const b = await broker();
    const writes = spyWrites(b);
    const n = MAX_BATCHED_MESSAGES + 88;
    const answers = await Promise.all(Array.from({ length: n }, (_, i) => b.send("q", { body: `${i}` })));
    assert.deepEqual(
      writes.map((ids) => ids.length),
      [MAX_BATCHED_MESSAGES, 88],
    );
    assert.deepEqual(
      await bodies(b, "q"),
      answers.map(([seq], i) => [seq, `${i}`]),
    );
    await b.close();
  });

  it("a parked receive is handed the first of a batch's messages, up to its max; the rest stay active", async () => {
    const b = await broker();
    const writes = spyWrites(b);
    const parked = b.receive("q", { maxMessages: 3, waitMs: 20_000 });
    await new Promise((r) => setTimeout(r, 30));
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => b.send("q", { body: `${i}` })));
    const got = await parked;
    assert.equal(writes.length, 1, "one write");
    assert.deepEqual(
      got.map((m) => [m.seqNumber, m.body.toString()]),
      answers.slice(0, 3).map(([seq], i) => [seq, `${i}`]),
    );
    const stats = await b.stats("q");
    assert.equal(stats.locked, 3);
    assert.equal(stats.active, 2);
    await b.close();
  });

  it("joined sends whose cached queue row went stale are each stored the long way, with the new config", async () => {
    const { b, changeConfig, close } = await staleQueueRow();
    const sends = [b.send("q", { body: "x" }), b.send("q", [{ body: "y" }, { body: "z" }])];
    changeConfig();
    const answers = await Promise.all(sends);
    const rows = await b.peek("q", { max: 10 });
    assert.deepEqual(
      rows.map((m) => [m.seqNumber, m.body.toString()]),
      [
        [answers[0]![0], "x"],
        [answers[1]![0], "y"],
        [answers[1]![1], "z"],
      ],
    );
    for (const m of rows) assert.ok((m.expiresAt ?? 0) > Date.now(), "the new config's TTL applies");
    await close();
  });
});
