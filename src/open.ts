import type { Broker } from "./contract/broker.js";
import type { Clock } from "./core/clock.js";
import type { MaintenanceResult } from "./core/maintenance-result.js";
import { isPostgresDsn, type PostgresBrokerOptions, type PostgresDsn } from "./store/postgres/options.js";
import type { PostgresBroker } from "./store/postgres/postgres-broker.js";
import { assertSupportedLocation } from "./store/sqlite/database.js";
import { SqliteBroker, type SqliteBrokerOptions } from "./store/sqlite/sqlite-broker.js";

/** What both storage engines offer beyond the `Broker` contract. */
export interface EngineBroker extends Broker {
  readonly clock: Clock;
  /** Runs every background step once, now (tests with a manual clock and the loops off). */
  runMaintenanceOnce(): Promise<MaintenanceResult>;
  /** Rows completed through this broker since it opened, per queue (for metrics). */
  completedCount(queue: string): number;
}

/** Options understood by `openBroker`: each engine reads its own and ignores the other's. */
export type OpenOptions = SqliteBrokerOptions & PostgresBrokerOptions;

/** A location that is clearly a SQLite file (or memory). */
export type SqliteLocation =
  | ":memory:"
  | `file:${string}`
  | `${string}.db`
  | `${string}.sqlite`
  | `${string}.sqlite3`;

export { isPostgresDsn, type PostgresDsn };

/**
 * Opens a broker, picking the storage engine by location: `postgres://…` or `postgresql://…` is a
 * PostgreSQL database that many nodes may share (tables in the schema `options.schema`, default
 * `mqlite`); a path (or `file:` path) is a SQLite file (created if needed), or `":memory:"`. Any
 * other URL scheme (`libsql://…`) is refused with `invalid_argument`, and nothing is created.
 *
 * ```ts
 * const broker = await openBroker(process.env.MQLITE_DB ?? "./mq.db");
 * ```
 *
 * The PostgreSQL driver is loaded only when a PostgreSQL location is opened.
 */
export function openBroker(dsn: PostgresDsn, options?: PostgresBrokerOptions): Promise<PostgresBroker>;
export function openBroker(path: SqliteLocation, options?: SqliteBrokerOptions): Promise<SqliteBroker>;
export function openBroker(location: string, options?: OpenOptions): Promise<SqliteBroker | PostgresBroker>;
export async function openBroker(
  location: string,
  options: OpenOptions = {},
): Promise<SqliteBroker | PostgresBroker> {
  assertSupportedLocation(location);
  if (isPostgresDsn(location)) {
    const { PostgresBroker } = await import("./store/postgres/postgres-broker.js");
    return PostgresBroker.open(location, options);
  }
  return new SqliteBroker(location, options);
}

// What the CLI configures and maintains besides opening a broker: it reaches storage only here.
export type { DlqBounds } from "./core/dlq-bounds.js";
export type { V5ImportCounts } from "./store/sqlite/mqlite-v5.js";
export { parseSyncMode, type SyncMode } from "./store/sqlite/sync-mode.js";

/**
 * The SQLite file operations of `mqlite vacuum` and `mqlite migrate-from-mqlite` (run on a stopped
 * broker's file), loaded on first use.
 */
export async function sqliteFileTools() {
  const [database, v5, migrate] = await Promise.all([
    import("./store/sqlite/database.js"),
    import("./store/sqlite/mqlite-v5.js"),
    import("./store/sqlite/migrate.js"),
  ]);
  return {
    isMemoryPath: database.isMemoryPath,
    normalizePath: database.normalizePath,
    openDatabase: database.openDatabase,
    isMqliteV5: v5.isMqliteV5,
    v5BackupPath: v5.v5BackupPath,
    readSchemaVersion: migrate.readSchemaVersion,
  };
}
