import { NotMqliteDatabaseError } from "../../contract/errors.js";
import type { SqliteDatabase } from "../database.js";
import type { Migration } from "./migration.js";

const STATES = ["active", "locked", "deferred", "scheduled", "completed", "cancelled", "dead_lettered"];
const OLD_CHECK = `CHECK (state IN (${STATES.map((s) => `'${s}'`).join(", ")}))`;
const NEW_CHECK = `CHECK (${STATES.map((s) => `state = '${s}'`).join(" OR ")})`;

/**
 * The messages' state CHECK as a chain of equalities instead of an IN list. Same rule, but SQLite
 * builds an ephemeral table for an IN list of this size every time the statement runs, and every
 * insert and state change ran it: a sixth of a batch insert's time.
 *
 * SQLite cannot alter a constraint, and copying the table would take as long as its rows. The
 * constraint is swapped in the stored schema instead, by the procedure SQLite documents for
 * changing constraints that leave the file format alone ("Making Other Kinds Of Table Schema
 * Changes"): edit the table's SQL, bump schema_version so every connection reloads the schema,
 * and load it once to see that it parses.
 * Every stored row satisfies the new CHECK, because it is the same rule.
 */
function swapStateCheck(db: SqliteDatabase): void {
  const version = db.pragma("schema_version", { simple: true }) as number;
  db.unsafeMode(true); // better-sqlite3's defensive mode forbids writing the schema table
  try {
    db.pragma("writable_schema = ON");
    const changed = db
      .prepare(
        "UPDATE sqlite_schema SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = 'messages' AND instr(sql, ?) > 0",
      )
      .run(OLD_CHECK, NEW_CHECK, OLD_CHECK).changes;
    if (changed !== 1)
      throw new NotMqliteDatabaseError(
        "mqlite: migration 4: the messages table's state CHECK is not the one mqlite wrote",
      );
    db.pragma(`schema_version = ${version + 1}`);
  } finally {
    db.pragma("writable_schema = OFF");
    db.unsafeMode(false);
  }
  // Only the schema's text changed, no page: loading the schema again (any statement does) is
  // the check that it still parses. A full quick_check would read the whole file at open.
  try {
    db.prepare("SELECT 1 FROM messages LIMIT 0").get();
  } catch (err) {
    throw new NotMqliteDatabaseError(`mqlite: migration 4: the edited schema does not load: ${String(err)}`);
  }
}

export const stateCheck: Migration = {
  version: 4,
  name: "state_check",
  apply: swapStateCheck,
};
