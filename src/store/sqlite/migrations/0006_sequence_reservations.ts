import type { SqliteDatabase } from "../database.js";
import type { Migration } from "./migration.js";
import { editTableSql } from "./schema-edit.js";

/**
 * Moves a table's ids from AUTOINCREMENT to a reservation in `sequences`, starting above every id
 * ever handed out (AUTOINCREMENT's counter, or the highest row if that is higher), and drops the
 * keyword: it changes no page, only the code SQLite generates for an insert.
 */
export function reserveIdsOf(db: SqliteDatabase, table: string, migration: number): void {
  db.prepare(`
INSERT INTO sequences (name, reserved) VALUES (?, max(
  ifnull((SELECT seq FROM sqlite_sequence WHERE name = ?), 0),
  ifnull((SELECT max(id) FROM ${table}), 0)))`).run(table, table);
  db.prepare("DELETE FROM sqlite_sequence WHERE name = ?").run(table);
  editTableSql(db, table, "INTEGER PRIMARY KEY AUTOINCREMENT", "INTEGER PRIMARY KEY", migration);
}

/**
 * Sequence numbers reserved in blocks instead of by AUTOINCREMENT. AUTOINCREMENT writes its
 * counter (a page of sqlite_sequence) in every transaction that inserts: a quarter of the bytes a
 * one-message commit writes. The engine now takes ids from a block it reserved in `sequences`
 * (one write per block, see engine/sequence-numbers.ts) and inserts them explicitly.
 */
export const sequenceReservations: Migration = {
  version: 6,
  name: "sequence_reservations",
  apply: (db) => {
    db.exec(`
CREATE TABLE sequences (
  name     TEXT PRIMARY KEY,
  reserved INTEGER NOT NULL
) STRICT;`);
    reserveIdsOf(db, "messages", 6);
  },
};
