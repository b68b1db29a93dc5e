import type { Migration } from "./migration.js";
import { editTableSql } from "./schema-edit.js";

/**
 * Sequence numbers reserved in blocks instead of by AUTOINCREMENT. AUTOINCREMENT writes its
 * counter (a page of sqlite_sequence) in every transaction that inserts: a quarter of the bytes a
 * one-message commit writes. The engine now takes ids from a block it reserved in `sequences`
 * (one write per block, see engine/sequence-numbers.ts) and inserts them explicitly, so the keyword
 * goes (it changes no page, only the code SQLite generates for an insert). The reservation starts
 * above every id ever handed out: the old counter, or the highest row if that is higher.
 */
export const sequenceReservations: Migration = {
  version: 6,
  name: "sequence_reservations",
  apply: (db) => {
    db.exec(`
CREATE TABLE sequences (
  name     TEXT PRIMARY KEY,
  reserved INTEGER NOT NULL
) STRICT;
INSERT INTO sequences (name, reserved) VALUES ('messages', max(
  ifnull((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0),
  ifnull((SELECT max(id) FROM messages), 0)));
DELETE FROM sqlite_sequence WHERE name = 'messages';`);
    editTableSql(db, "messages", "INTEGER PRIMARY KEY AUTOINCREMENT", "INTEGER PRIMARY KEY", 6);
  },
};
