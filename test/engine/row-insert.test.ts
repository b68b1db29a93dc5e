import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { openDatabase } from "../../src/store/sqlite/database.js";
import { QueueCounter } from "../../src/store/sqlite/queue-counter.js";
import { COLUMN_COUNT, INSERT_COLUMNS, RowInserter, shapeSql } from "../../src/store/sqlite/row-insert.js";
import { SequenceNumbers } from "../../src/store/sqlite/sequence-numbers.js";

// Rows are written with statements shaped to them: defaults left out, shared values bound once,
// per-row values in a VALUES list. Whatever the shape, each row must store exactly its own values.
describe("shaped row inserts", () => {
  const bit = (name: (typeof INSERT_COLUMNS)[number]) => 1 << INSERT_COLUMNS.indexOf(name);

  it("a single row leaves its defaults out and binds the rest once", () => {
    const sql = shapeSql(1, 0, bit("message_id") | bit("topic"));
    assert.doesNotMatch(sql, /message_id|topic/);
    assert.match(sql, /^INSERT INTO messages \(id, queue, state, .*\) VALUES \(\?(, \?)*\)$/);
    // The id, then every column but the two left out.
    assert.equal(sql.match(/\?/g)?.length, 1 + COLUMN_COUNT - 2);
  });

  it("many rows bind shared values in the SELECT list and varying ones per row", () => {
    const sql = shapeSql(3, bit("body") | bit("subject"), bit("topic"));
    // Each row's index is a literal: the first id is bound once and each row adds its index.
    assert.match(
      sql,
      /SELECT \? \+ column1, .*column2.*column3.* FROM \(VALUES \(0, \?, \?\), \(1, \?, \?\), \(2, \?, \?\)\)$/,
    );
    // subject comes before body in the column order, so it is column2.
    assert.match(sql, /subject, properties, body/);
    assert.match(sql, /SELECT \? \+ column1, (\?, ){11}column2, \?, column3/);
  });

  it("stores every row's own values, in order, with consecutive ids, whatever varies", () => {
    const db = openDatabase(":memory:", { now: 0 });
    db.prepare("INSERT INTO queues (name, created_at, updated_at) VALUES ('q', 0, 0), ('r', 0, 0)").run();
    const rows = new RowInserter(db, new SequenceNumbers(db, "messages"), new QueueCounter(db));
    const row = (i: number, over: Partial<Record<(typeof INSERT_COLUMNS)[number], unknown>> = {}) => {
      const base: Record<string, unknown> = {
        queue: "q",
        state: "active",
        priority: 0,
        visible_at: 100,
        enqueued_at: 100,
        expires_at: 0,
        message_id: null,
        correlation_id: null,
        reply_to: null,
        group_id: null,
        content_type: null,
        subject: null,
        properties: null,
        body: Buffer.from(`b${i}`),
        max_deliveries: 0,
        lock_duration_ms: 0,
        unique_key: null,
        topic: null,
        subscription: null,
        lock_token: null,
        locked_until: 0,
        delivery_count: 0,
        delivered_at: 0,
        ...over,
      };
      return INSERT_COLUMNS.map((c) => base[c]);
    };
    const cases = [
      // one row, all defaults
      [row(0)],
      // only the body varies
      Array.from({ length: 5 }, (_, i) => row(i)),
      // every row identical (one shared body object)
      Array.from({ length: 3 }, () => row(9, { body: Buffer.from("same") })),
      // several columns vary, some rows at a column's default and some not
      [
        row(1, { priority: 3, subject: "s" }),
        row(2, { queue: "r", message_id: "m2" }),
        row(3, { expires_at: 500, properties: '{"k":"v"}', state: "scheduled", visible_at: 200 }),
        row(4, { topic: "t", subscription: "sub", max_deliveries: 2, lock_duration_ms: 9 }),
        // handed to a parked receiver: stored locked for it, delivered once
        row(5, {
          state: "locked",
          lock_token: "tok",
          locked_until: 30_100,
          delivery_count: 1,
          delivered_at: 100,
        }),
      ],
    ];
    const read = db.prepare(`SELECT ${INSERT_COLUMNS.join(", ")} FROM messages WHERE id = ?`);
    let expectedLast = 0;
    for (const c of cases) {
      const last = rows.run(c.flat(), c.length);
      expectedLast += c.length;
      assert.equal(last, expectedLast);
      c.forEach((expected, i) => {
        const stored = read.get(last - c.length + 1 + i) as Record<string, unknown>;
        assert.deepEqual(
          INSERT_COLUMNS.map((col) => stored[col]),
          expected,
        );
      });
    }
    // Every row counted by queue and state, as a full count finds them (one upsert per pair).
    const counted = db
      .prepare("SELECT queue, state, n FROM queue_counts WHERE n > 0 ORDER BY queue, state")
      .all();
    const full = db
      .prepare("SELECT queue, state, count(*) AS n FROM messages GROUP BY queue, state ORDER BY queue, state")
      .all();
    assert.deepEqual(counted, full);
    assert.deepEqual(full, [
      { queue: "q", state: "active", n: 11 },
      { queue: "q", state: "locked", n: 1 },
      { queue: "q", state: "scheduled", n: 1 },
      { queue: "r", state: "active", n: 1 },
    ]);
    db.close();
  });

  it("a broker batch mixing shapes reads back exactly as sent", async () => {
    const b = await openBroker(":memory:", { background: false, logger: silentLogger });
    await b.createQueue("q");
    const sent = Array.from({ length: 150 }, (_, i) => ({
      body: `m${i}`,
      subject: i % 3 === 0 ? "three" : undefined,
      priority: i % 5 === 0 ? 2 : undefined,
      properties: i % 7 === 0 ? { n: String(i) } : undefined,
    }));
    const seqs = await b.send("q", sent);
    const got = new Map((await b.peek("q", { max: 200 })).map((m) => [m.seqNumber, m]));
    seqs.forEach((s, i) => {
      const m = got.get(s)!;
      assert.equal(m.body.toString(), `m${i}`);
      assert.equal(m.subject ?? undefined, sent[i]!.subject);
      assert.equal(m.priority ?? 0, sent[i]!.priority ?? 0);
      assert.deepEqual(m.properties ?? undefined, sent[i]!.properties);
    });
    await b.close();
  });
});
