import { NotMqliteDatabaseError, SchemaVersionMismatchError } from "../../contract/errors.js";
import type { SqliteDatabase } from "./database.js";
import { LATEST_SCHEMA_VERSION, migrations } from "./migrations/index.js";

/** The schema version stored in the database, 0 for a fresh one. Refuses files that are not ours. */
export function readSchemaVersion(db: SqliteDatabase): number {
  const hasTable = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
    .get();
  if (!hasTable) {
    const tables = db
      .prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .get() as { n: number };
    if (tables.n > 0) {
      throw new NotMqliteDatabaseError(
        "mqlite: the file is a SQLite database of another application (no schema_version table)",
      );
    }
    return 0;
  }
  const row = db.prepare("SELECT max(version) AS v FROM schema_version").get() as { v: number | null };
  return row.v ?? 0;
}

/**
 * Applies the pending migrations, each in its own immediate transaction, so that processes opening
 * the same file concurrently migrate it once. A database written by a newer schema is refused and
 * left untouched. `upTo` stops at that version (the MQLite importer writes a known one).
 */
export function migrate(db: SqliteDatabase, now: number, upTo = LATEST_SCHEMA_VERSION): void {
  const check = (version: number) => {
    if (version > LATEST_SCHEMA_VERSION) {
      throw new SchemaVersionMismatchError(
        `mqlite: database schema version ${version} is newer than this build's ${LATEST_SCHEMA_VERSION}; upgrade mqlite`,
      );
    }
  };
  check(readSchemaVersion(db));
  for (const migration of migrations) {
    if (migration.version > upTo) break;
    const apply = db.transaction(() => {
      const current = readSchemaVersion(db);
      check(current);
      if (current >= migration.version) return;
      if (current === 0 && migration.version === 1) {
        db.exec(
          "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT",
        );
      }
      if (migration.apply) migration.apply(db);
      else db.exec(migration.sql);
      db.prepare("INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)").run(
        migration.version,
        migration.name,
        now,
      );
    });
    apply.immediate();
  }
}
