import {
  DbLockedError,
  MqliteError,
  NotMqliteDatabaseError,
  StorageFullError,
} from "../../contract/errors.js";

/** SQLite's error codes as better-sqlite3 reports them (`err.code`). */
function sqliteCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_") ? code : undefined;
}

/**
 * Turns a SQLite failure into the named error a caller can act on; anything unrecognised is
 * returned unchanged (and becomes `internal` at the edge).
 */
export function mapSqliteError(err: unknown): unknown {
  if (err instanceof MqliteError) return err;
  const code = sqliteCode(err);
  if (!code) return err;
  if (code === "SQLITE_FULL" || (code.startsWith("SQLITE_IOERR") && /disk|space|full/i.test(String(err)))) {
    return new StorageFullError("mqlite: database or disk is full", { cause: err });
  }
  if (code === "SQLITE_BUSY" || code.startsWith("SQLITE_BUSY_") || code === "SQLITE_LOCKED") {
    return new DbLockedError("mqlite: database is locked by another connection", { cause: err });
  }
  if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT" || code.startsWith("SQLITE_CORRUPT_")) {
    return new NotMqliteDatabaseError(`mqlite: not a usable database file (${code})`, { cause: err });
  }
  return err;
}

/** True when the failure is a transient lock conflict worth retrying. */
export function isBusy(err: unknown): boolean {
  const code = sqliteCode(err);
  return code !== undefined && (code === "SQLITE_BUSY" || code.startsWith("SQLITE_BUSY_"));
}
