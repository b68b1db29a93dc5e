// Concurrent plain sends to one queue join the write the first of them waits for (core/send-batches.ts):
// on PostgreSQL, one INSERT of all their rows instead of one statement (and one commit) per send,
// each send answered the seqs of its own messages.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { brokerWithAdmin, requirePostgres } from "./pg.js";
import { captureStatements } from "./plans.js";

await requirePostgres();

describe("PostgreSQL: concurrent sends written together", () => {
  let b: PostgresBroker;
  let close: () => Promise<void>;

  before(async () => {
    ({ broker: b, close } = await brokerWithAdmin("mqbatch"));
    await b.createQueue("q");
    // The queue's row is cached by a first send, as a running broker's is.
    await b.send("q", { body: "warm" });
    await b.receive("q", { mode: "receive-and-delete" });
  });
  after(() => close());

  it("sends made together are one INSERT; each gets the seqs of its own messages", async () => {
    const capture = captureStatements("INSERT INTO messages");
    let answers: number[][];
    try {
      answers = await Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          b.send("q", i % 3 === 0 ? [{ body: `${i}a` }, { body: `${i}b` }] : { body: `${i}` }),
        ),
      );
    } finally {
      capture.restore();
    }
    // Made in one turn, before the first write could begin: all in one INSERT.
    assert.equal(capture.seen.length, 1, "one INSERT for 32 sends");
    const stored = new Map((await b.peek("q", { max: 100 })).map((m) => [m.seqNumber, m.body.toString()]));
    assert.equal(stored.size, 43);
    answers.forEach((seqs, i) => {
      const bodies = i % 3 === 0 ? [`${i}a`, `${i}b`] : [`${i}`];
      assert.deepEqual(
        seqs.map((s) => stored.get(s)),
        bodies,
        `send ${i}`,
      );
    });
  });
});
