// SQLite's reads for retention by count (keptMark, settledKeys): test/support/settled-ops.ts.
import { describe, it } from "node:test";
import { openDatabase } from "../../src/store/sqlite/database.js";
import { SqliteRecordOps } from "../../src/store/sqlite/message-records.js";
import { checkSettledReads, SETTLED_ROWS } from "../support/settled-ops.js";

describe("SQLite: the reads of retention by count", () => {
  it("keptMark and settledKeys answer as a sort of the rows would", async () => {
    const db = openDatabase(":memory:", { now: 0 });
    db.prepare("INSERT INTO queues (name, created_at, updated_at) VALUES ('q', 0, 0), ('other', 0, 0)").run();
    const insert = db.prepare(
      "INSERT INTO messages (queue, state, enqueued_at, body, subject, settled_at) VALUES ('q', ?, 0, x'', ?, ?)",
    );
    const ids = SETTLED_ROWS.map((r) => Number(insert.run(r.state, r.subject, r.settledAt).lastInsertRowid));
    await checkSettledReads(new SqliteRecordOps(db), ids);
    db.close();
  });
});
