import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { DbLockedError, InvalidArgumentError, MqliteError } from "../../contract/errors.js";
import { migrate, readSchemaVersion } from "./migrate.js";
import { backupV5, importV5, isMqliteV5, type V5ImportCounts, type V5Progress } from "./mqlite-v5.js";
import { mapSqliteError } from "./sqlite-errors.js";
import type { SyncMode } from "./sync-mode.js";

export type SqliteDatabase = Database.Database;

export interface OpenDatabaseOptions {
  /** `synchronous` pragma. Default `normal`. */
  synchronous?: SyncMode;
  /** How long a write waits for another process's lock before failing. Default 5000 ms. */
  busyTimeoutMs?: number;
  /** Hold an exclusive lock on the file for the connection's lifetime; a second opener fails with `db_locked`. */
  exclusive?: boolean;
  /** Epoch ms for the migration bookkeeping. */
  now: number;
  /** Reports the message copy while a MQLite (schema 5) file is upgraded in place. */
  onV5Progress?: V5Progress;
  /** Called once a MQLite (schema 5) file has been upgraded: what was copied, where the backup is. */
  onV5Import?: (counts: V5ImportCounts, backup: string) => void;
}

/**
 * WAL frames (pages) written before a commit checkpoints them into the file (SQLite's default is
 * 1000). Each checkpoint costs two fsyncs and a copy of every page changed since the last one; at
 * 4000 frames (a WAL of about 16 MiB) sustained writes spend a third less time checkpointing, because
 * pages rewritten by many commits (index leaves, the last table page, page 1) are copied once.
 * The price is a longer single stall (tens of ms) on the commit that checkpoints; a broker's
 * checkpoint thread (checkpointer.ts) copies most of those pages beforehand, leaving the commit
 * the rest and the fsyncs, and the WAL reset that keeps the WAL from growing.
 */
export const WAL_AUTOCHECKPOINT_FRAMES = 4000;

/**
 * The size the WAL file is cut back to when it starts over after a checkpoint. A WAL grows to hold
 * everything written between two checkpoints, and a long write (a 24 MB batch) holds its commit's
 * checkpoint back; without a limit the file kept that size on disk. Twice the WAL of
 * `WAL_AUTOCHECKPOINT_FRAMES`, so steady writes never pay for the cut.
 */
export const WAL_SIZE_LIMIT_BYTES = 32 * 1024 * 1024;

/** True for an in-memory database path. */
export function isMemoryPath(path: string): boolean {
  return path === ":memory:" || path === "" || path.startsWith("file::memory:");
}

/** A location's URL scheme (`libsql` of `libsql://…`), lowercased; undefined for a plain path. */
function schemeOf(location: string): string | undefined {
  return /^([a-z][a-z0-9+.-]*):\/\//i.exec(location.trim())?.[1]?.toLowerCase();
}

/**
 * Refuses a location this build cannot store in (`libsql://`, `https://`, …) before anything is
 * created: a SQLite path would otherwise make a local directory named after the scheme.
 * PostgreSQL URLs are the caller's to route; `file:` paths are SQLite files.
 */
export function assertSupportedLocation(location: string): void {
  const scheme = schemeOf(location);
  if (scheme === undefined || scheme === "file" || scheme === "postgres" || scheme === "postgresql") return;
  throw new InvalidArgumentError(
    `unsupported location scheme "${scheme}"; supported: file paths, :memory:, postgres://`,
  );
}

/** Strips a `file:` prefix (the original's DSN form) from a local path. Refuses other URL schemes. */
export function normalizePath(path: string): string {
  if (isMemoryPath(path)) return ":memory:";
  assertSupportedLocation(path);
  if (schemeOf(path) !== undefined && !path.trim().toLowerCase().startsWith("file:")) {
    throw new InvalidArgumentError(
      `a PostgreSQL location is not a SQLite file: ${path.replace(/\/\/[^@/]*@/, "//***@")}`,
    );
  }
  const bare = path.startsWith("file:") ? path.slice("file:".length).replace(/\?.*$/, "") : path;
  return resolve(bare);
}

/**
 * Opens (creating if needed) and migrates an mqlite database: WAL, the chosen `synchronous`, a busy
 * timeout, foreign keys, incremental auto-vacuum, a checkpoint every `WAL_AUTOCHECKPOINT_FRAMES`,
 * a WAL cut back to `WAL_SIZE_LIMIT_BYTES`.
 * Refuses a newer schema or a foreign file untouched.
 */
export function openDatabase(path: string, options: OpenDatabaseOptions): SqliteDatabase {
  const file = normalizePath(path);
  const memory = file === ":memory:";
  if (!memory) mkdirSync(dirname(file), { recursive: true });
  const busyTimeout = options.busyTimeoutMs ?? 5000;
  let db: SqliteDatabase | undefined;
  try {
    // A fail-fast probe when exclusive: the lock is either free now or held by someone else.
    db = new Database(file, { timeout: options.exclusive ? 0 : busyTimeout });
    // Refuse another application's file (or a non-database) before anything below writes to it:
    // switching it to WAL rewrote its header.
    const fromV5 = !memory && isMqliteV5(db);
    if (!memory && !fromV5) readSchemaVersion(db);
    if (!memory) {
      if (options.exclusive) db.pragma("locking_mode = EXCLUSIVE");
      // auto_vacuum only takes effect before the first table exists.
      db.pragma("auto_vacuum = INCREMENTAL");
      db.pragma("journal_mode = WAL");
      db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_FRAMES}`);
      db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      db.pragma(`synchronous = ${(options.synchronous ?? "normal").toUpperCase()}`);
      db.pragma("temp_store = MEMORY");
    }
    db.pragma("foreign_keys = ON");
    if (options.exclusive && !memory) {
      // Take the exclusive lock now (it is then held until close).
      db.exec("BEGIN IMMEDIATE; COMMIT");
    }
    if (fromV5) {
      // MQLite's file: a copy beside it, then the upgrade in one transaction.
      const backup = backupV5(db, file);
      const counts = importV5(db, options.now, options.onV5Progress);
      if (counts) options.onV5Import?.(counts, backup);
    }
    migrate(db, options.now);
    db.pragma(`busy_timeout = ${busyTimeout}`);
    return db;
  } catch (err) {
    db?.close();
    const mapped = mapSqliteError(err);
    if (options.exclusive && mapped instanceof DbLockedError) {
      throw new DbLockedError(`mqlite: ${file} is locked by another process`, { cause: err });
    }
    if (mapped instanceof MqliteError) throw mapped;
    throw err;
  }
}
