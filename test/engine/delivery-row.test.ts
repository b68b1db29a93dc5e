import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DELIVERY_COLUMNS, deliveryRow } from "../../src/core/message-row.js";
import { openDatabase } from "../../src/store/sqlite/database.js";

// Claims read their rows in raw mode and name the values themselves: the names must be the
// columns', in DELIVERY_COLUMNS' order.
describe("delivery rows from raw values", () => {
  it("name every column of DELIVERY_COLUMNS as the driver's own row object does", () => {
    const db = openDatabase(":memory:", { now: 0 });
    db.prepare("INSERT INTO queues (name, created_at, updated_at) VALUES ('q', 0, 0)").run();
    // Every column set, each to a value no other column holds.
    db.prepare(`
      INSERT INTO messages (queue, state, priority, locked_until, lock_token, delivery_count, enqueued_at,
        message_id, correlation_id, reply_to, group_id, content_type, subject, properties, body,
        max_deliveries, lock_duration_ms)
      VALUES ('q', 'locked', 7, 1000, 'tok', 3, 500, 'mid', 'cid', 'rto', 'gid', 'ct', 'sub', '{"k":"v"}',
        x'626f6479', 9, 250)`).run();
    const sql = `SELECT ${DELIVERY_COLUMNS} FROM messages`;
    const object = db.prepare(sql).get() as Record<string, unknown>;
    const values = db.prepare(sql).raw(true).get() as unknown[];
    const row = deliveryRow(values);
    assert.deepEqual({ ...row }, object);
    assert.deepEqual(Object.keys(row), DELIVERY_COLUMNS.split(", "));
    db.close();
  });
});
