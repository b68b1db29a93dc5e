import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { NotMqliteDatabaseError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { migrations } from "../../src/store/sqlite/migrations/index.js";
import { tempDir } from "../support/temp.js";

const quiet = { background: false, logger: silentLogger } as const;

/** A file at schema `version`, as a build of that version left it, with one message stored. */
function fileAtVersion(path: string, version: number): void {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec(
    "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT",
  );
  for (const m of migrations.filter((m) => m.version <= version)) {
    if (m.apply) m.apply(db);
    else db.exec(m.sql);
    db.prepare("INSERT INTO schema_version VALUES (?, ?, 0)").run(m.version, m.name);
  }
  db.prepare("INSERT INTO queues (name, created_at, updated_at) VALUES ('q', 0, 0)").run();
  db.prepare(
    "INSERT INTO messages (queue, state, enqueued_at, body) VALUES ('q', 'active', 0, x'6869')",
  ).run();
  db.close();
}

const messagesSql = (db: Database.Database) =>
  (
    db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'messages'").get() as {
      sql: string;
    }
  ).sql;

describe("store: migrations", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("a file of schema 3 migrates to the schema of a fresh file, keeping its rows", async () => {
    const fresh = tmp.file("fresh.db");
    await (await openBroker(fresh, quiet)).close();
    const path = tmp.file("v3.db");
    fileAtVersion(path, 3);
    // A connection that read the old schema sees the new one once the migrations committed.
    const other = new Database(path);
    assert.match(messagesSql(other), /CHECK \(state IN \(/);

    const broker = await openBroker(path, quiet);
    const [m] = await broker.receive("q");
    assert.equal(m?.body.toString(), "hi");
    await broker.complete("q", m!.seqNumber, m!.lockToken!);
    await broker.send("q", [{ body: "low" }, { body: "high", priority: 5 }]);
    assert.deepEqual(
      (await broker.receive("q", { maxMessages: 2 })).map((x) => x.body.toString()),
      ["high", "low"],
    );
    await broker.close();

    const schema = (db: Database.Database) =>
      db
        .prepare(
          "SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name",
        )
        .all();
    const want = new Database(fresh, { readonly: true });
    assert.deepEqual(schema(other), schema(want));
    want.close();
    // 4 (state_check): the same rule as a chain of equalities.
    assert.match(
      messagesSql(other),
      /CHECK \(state = 'active' OR state = 'locked' OR .* OR state = 'dead_lettered'\)/,
    );
    assert.throws(
      () => other.prepare("UPDATE messages SET state = 'bogus'").run(),
      /CHECK constraint failed/,
    );
    assert.equal(other.pragma("integrity_check", { simple: true }), "ok");
    assert.deepEqual(
      other.prepare("SELECT version, name FROM schema_version WHERE version > 3 ORDER BY version").all(),
      [
        { version: 4, name: "state_check" },
        { version: 5, name: "priority_claim_index" },
        { version: 6, name: "sequence_reservations" },
        { version: 7, name: "topic_log_reservations" },
        { version: 8, name: "rowid_tailed_indexes" },
        { version: 9, name: "queue_counts" },
        { version: 10, name: "flows_logs_events" },
        { version: 11, name: "metrics_debounce" },
        { version: 12, name: "counted_inserts" },
        { version: 13, name: "counted_claims" },
      ],
    );
    // 6 (sequence_reservations): ids come from the reservation, not from AUTOINCREMENT.
    assert.doesNotMatch(messagesSql(other), /AUTOINCREMENT/);
    // 7 (topic_log_reservations): nor the topic log's.
    assert.doesNotMatch(
      other.prepare("SELECT sql FROM sqlite_schema WHERE name = 'topic_messages'").pluck().get() as string,
      /AUTOINCREMENT/,
    );
    // 8 (rowid_tailed_indexes): no index names the id its entries already end with.
    const tailed = other
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql LIKE '%, id)%'")
      .pluck()
      .all();
    assert.deepEqual(tailed, []);
    // 9 (queue_counts): filled from the rows the file already held.
    const counted = other
      .prepare("SELECT queue, state, count(*) AS n FROM messages GROUP BY queue, state ORDER BY queue, state")
      .all();
    assert.ok(counted.length > 0, "the old file holds messages");
    assert.deepEqual(
      other
        .prepare(
          "SELECT queue, state, n FROM queue_counts WHERE state <> 'backing_off' AND n > 0 ORDER BY queue, state",
        )
        .all(),
      counted,
    );
    other.close();
  });

  it("6 (sequence_reservations): numbering goes on above the highest ever handed out, deleted or not", async () => {
    const path = tmp.file("v5.db");
    fileAtVersion(path, 5);
    const db = new Database(path);
    const insert = db.prepare(
      "INSERT INTO messages (queue, state, enqueued_at, body) VALUES ('q', 'active', 0, x'6869')",
    );
    for (let i = 0; i < 4; i++) insert.run();
    // The four newest deleted: only the first (id 1) is left; AUTOINCREMENT's counter says 5.
    db.prepare("DELETE FROM messages WHERE id > 1").run();
    db.close();

    const broker = await openBroker(path, quiet);
    assert.deepEqual(await broker.send("q", [{ body: "a" }, { body: "b" }]), [6, 7]);
    assert.deepEqual(
      (await broker.peek("q", { max: 5 })).map((m) => m.seqNumber),
      [1, 6, 7],
    );
    await broker.close();
    const after = new Database(path, { readonly: true });
    assert.equal(
      after.prepare("SELECT count(*) AS n FROM sqlite_sequence WHERE name = 'messages'").pluck().get(),
      0,
    );
    assert.equal(after.prepare("SELECT reserved FROM sequences WHERE name = 'messages'").pluck().get(), 7);
    assert.equal(after.pragma("integrity_check", { simple: true }), "ok");
    after.close();
  });

  it("4 (state_check): a file whose state CHECK is not the expected one is refused and left as it was", async () => {
    const path = tmp.file("odd.db");
    fileAtVersion(path, 3);
    const db = new Database(path);
    // A hand-edited schema: the migration must not guess.
    db.unsafeMode(true);
    const version = db.pragma("schema_version", { simple: true }) as number;
    db.pragma("writable_schema = ON");
    db.prepare(
      "UPDATE sqlite_schema SET sql = replace(sql, 'CHECK (state IN (', 'CHECK (state  IN (') WHERE name = 'messages'",
    ).run();
    db.pragma(`schema_version = ${version + 1}`);
    db.pragma("writable_schema = OFF");
    db.unsafeMode(false);
    const before = messagesSql(db);
    db.close();

    await assert.rejects(openBroker(path, quiet), (err: unknown) => {
      assert.ok(err instanceof NotMqliteDatabaseError);
      assert.equal(err.code, "not_mqlite_database");
      assert.match(err.message, /migration 4/);
      return true;
    });
    const after = new Database(path, { readonly: true });
    assert.equal(messagesSql(after), before);
    assert.equal((after.prepare("SELECT max(version) AS v FROM schema_version").get() as { v: number }).v, 3);
    after.close();
  });
});
