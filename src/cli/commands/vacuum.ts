import { existsSync, statSync } from "node:fs";
import type { Command } from "commander";
import { DbLockedError } from "../../contract/errors.js";
import { isPostgresDsn } from "../../postgres/options.js";
import { CommandError, UsageError } from "../errors.js";
import { addBrokerOptions, type BrokerFlags } from "../options.js";
import { bytes } from "../output/format.js";
import { emit } from "../run.js";

interface VacuumFlags extends BrokerFlags {
  full?: boolean;
}

/** The file the flags and environment name; a served broker or a non-file database is refused. */
function localDatabase(flags: VacuumFlags): string {
  if (flags.endpoint !== undefined || flags.token !== undefined)
    throw new UsageError(
      "vacuum works on a local database file with the broker stopped: use --db or MQLITE_DB, not --endpoint",
    );
  const db = (flags.db ?? process.env.MQLITE_DB ?? "").trim();
  if (db === "") throw new UsageError("vacuum needs the database file: --db or MQLITE_DB");
  if (isPostgresDsn(db)) throw new UsageError("vacuum is for SQLite files; PostgreSQL has its own VACUUM");
  return db;
}

function onDisk(file: string): number {
  let total = 0;
  for (const suffix of ["", "-wal", "-shm"]) {
    try {
      total += statSync(file + suffix).size;
    } catch {
      // absent
    }
  }
  return total;
}

/**
 * `mqlite vacuum [--full]`: gives free pages back to the file system. It takes the file
 * exclusively, so it fails fast (db_locked) while a broker has it open.
 */
export function registerVacuum(program: Command): void {
  const cmd = program
    .command("vacuum")
    .summary("shrink a local database file (broker stopped)")
    .description("shrink a local database file (the broker must be stopped): checkpoint + incremental vacuum")
    .option("--full", "rewrite the whole file (VACUUM): slower, needs free space for a copy");
  addBrokerOptions(cmd).action(async (flags: VacuumFlags) => {
    const db = localDatabase(flags);
    const { isMemoryPath, normalizePath, openDatabase } = await import("../../store/database.js");
    if (isMemoryPath(db)) throw new UsageError("an in-memory database has nothing to vacuum");
    const file = normalizePath(db);
    if (!existsSync(file)) throw new CommandError("not_found", `no database at ${file}`);
    const before = onDisk(file);
    let sqlite: ReturnType<typeof openDatabase>;
    try {
      sqlite = openDatabase(file, { exclusive: true, now: Date.now() });
    } catch (err) {
      if (err instanceof DbLockedError)
        throw new CommandError("db_locked", `${err.message}: stop the broker before vacuum`);
      throw err;
    }
    try {
      sqlite.pragma("wal_checkpoint(TRUNCATE)");
      if (flags.full) sqlite.exec("VACUUM");
      else sqlite.pragma("incremental_vacuum");
      sqlite.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      sqlite.close();
    }
    const after = onDisk(file);
    await emit(
      flags,
      { location: file, full: flags.full === true, bytes_before: before, bytes_after: after },
      () => `vacuumed ${file}${flags.full ? " (full)" : ""}: ${bytes(before)} → ${bytes(after)}`,
    );
  });
}
