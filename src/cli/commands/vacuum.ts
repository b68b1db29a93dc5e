import { existsSync, statSync } from "node:fs";
import type { Command } from "commander";
import { DbLockedError } from "../../contract/errors.js";
import { isPostgresDsn, sqliteFileTools } from "../../open.js";
import { DEFAULT_DB } from "../connect/target.js";
import { CommandError, UsageError } from "../errors.js";
import { addBrokerOptions, type BrokerFlags } from "../options.js";
import { bytes } from "../output/format.js";
import { emit } from "../run.js";

interface VacuumFlags extends BrokerFlags {
  full?: boolean;
}

/** The file the flags and environment name; a served broker or a non-file database is refused. */
function localDatabase(flags: VacuumFlags): string {
  if (flags.endpoint?.trim() || process.env.MQLITE_ENDPOINT?.trim())
    throw new UsageError(
      "vacuum is a local maintenance command: drop --endpoint/MQLITE_ENDPOINT and point MQLITE_DB at the file",
    );
  const db = (flags.db ?? process.env.MQLITE_DB ?? "").trim() || DEFAULT_DB;
  if (isPostgresDsn(db)) throw new UsageError("vacuum is for SQLite files; PostgreSQL has its own VACUUM");
  return db;
}

/** The main file's size, as the original measures it (the -wal file not counted). */
function mainFile(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

const mib = (n: number) => (n / 2 ** 20).toFixed(2);

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
    const { isMemoryPath, normalizePath, openDatabase } = await sqliteFileTools();
    if (isMemoryPath(db)) throw new UsageError("an in-memory database has nothing to vacuum");
    const file = normalizePath(db);
    if (!existsSync(file)) throw new CommandError("not_found", `no database at ${file}`);
    const before = onDisk(file);
    const beforeMain = mainFile(file);
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
    const afterMain = mainFile(file);
    const freed = Math.max(beforeMain - afterMain, 0);
    const grew = Math.max(afterMain - beforeMain, 0);
    const kind = flags.full ? "VACUUM" : "incremental_vacuum";
    const outcome = grew > 0 ? `nothing to reclaim; the DB grew ${mib(grew)} MiB` : `freed ${mib(freed)} MiB`;
    await emit(flags, {
      text: `ok: ${kind} — ${mib(beforeMain)} MiB -> ${mib(afterMain)} MiB (${outcome})`,
      json: {
        action: "vacuum",
        after_bytes: afterMain,
        before_bytes: beforeMain,
        freed_bytes: freed,
        grew_bytes: grew,
      },
      human: () => `vacuumed ${file}${flags.full ? " (full)" : ""}: ${bytes(before)} → ${bytes(after)}`,
      wire: { location: file, full: flags.full === true, bytes_before: before, bytes_after: after },
    });
  });
}
