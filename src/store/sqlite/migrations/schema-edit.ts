import { NotMqliteDatabaseError } from "../../../contract/errors.js";
import type { SqliteDatabase } from "../database.js";

/**
 * Replaces `from` with `to` in a table's stored CREATE statement, for a change that leaves the file
 * format alone (a constraint, a keyword), by the procedure SQLite documents for schema changes
 * ALTER TABLE cannot make ("Making Other Kinds Of Table Schema Changes"): edit the table's SQL,
 * bump schema_version so every connection reloads the schema, and load it once to see that it
 * parses. Copying the table instead would take as long as its rows.
 *
 * A table whose SQL does not hold `from` (a hand-edited schema) is refused: the migration must not
 * guess. `migration` names the migration in the error.
 */
export function editTableSql(
  db: SqliteDatabase,
  table: string,
  from: string,
  to: string,
  migration: number,
): void {
  const version = db.pragma("schema_version", { simple: true }) as number;
  db.unsafeMode(true); // better-sqlite3's defensive mode forbids writing the schema table
  try {
    db.pragma("writable_schema = ON");
    const changed = db
      .prepare(
        "UPDATE sqlite_schema SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = ? AND instr(sql, ?) > 0",
      )
      .run(from, to, table, from).changes;
    if (changed !== 1)
      throw new NotMqliteDatabaseError(
        `mqlite: migration ${migration}: the ${table} table's schema is not the one mqlite wrote`,
      );
    db.pragma(`schema_version = ${version + 1}`);
  } finally {
    db.pragma("writable_schema = OFF");
    db.unsafeMode(false);
  }
  // Only the schema's text changed, no page: loading the schema again (any statement does) is the
  // check that it still parses. A full quick_check would read the whole file at open.
  try {
    db.prepare(`SELECT 1 FROM ${table} LIMIT 0`).get();
  } catch (err) {
    throw new NotMqliteDatabaseError(
      `mqlite: migration ${migration}: the edited schema does not load: ${String(err)}`,
    );
  }
}
