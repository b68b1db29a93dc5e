import { existsSync } from "node:fs";
import type { Command } from "commander";
import { DbLockedError } from "../../contract/errors.js";
import { isPostgresDsn, sqliteFileTools, type V5ImportCounts } from "../../open.js";
import { CommandError, UsageError } from "../errors.js";
import { addOutputOption, type OutputFormat } from "../options.js";
import { Progress } from "../output/progress.js";
import { emit } from "../run.js";

interface MigrateFlags {
  output: OutputFormat;
  progress?: boolean;
}

/** On a terminal the bar shows only for a copy this long; `--progress` shows it always. */
const LARGE = 10_000;

/**
 * `mqlite migrate-from-mqlite <file>`: upgrades a file MQLite wrote (schema 5) in place, now,
 * rather than at the next open: the same upgrade (a `<file>.v5.bak` copy, then one transaction),
 * with a progress bar on stderr. The broker must be stopped: the file is taken exclusively.
 */
export function registerMigrateFromMqlite(program: Command): void {
  const cmd = program
    .command("migrate-from-mqlite")
    .summary("upgrade a MQLite database file in place (broker stopped)")
    .description(
      "upgrade a file MQLite wrote (schema 5) to this version's schema, in place and in one transaction, " +
        "after keeping a copy as <file>.v5.bak; every queue, subscription, message (every state, lease and " +
        "sequence number), dedup entry and receipt is kept",
    )
    .argument("<file>", "the MQLite database file (path or file:path)")
    .option("--progress", "report the copy on stderr even when it is not a terminal");
  addOutputOption(cmd).action(async (path: string, flags: MigrateFlags) => {
    if (isPostgresDsn(path) || path.trim() === ":memory:")
      throw new UsageError("migrate-from-mqlite upgrades a SQLite file: name its path");
    const { normalizePath, openDatabase, isMqliteV5, v5BackupPath, readSchemaVersion } =
      await sqliteFileTools();
    const file = normalizePath(path);
    if (!existsSync(file)) throw new CommandError("not_found", `no database at ${file}`);

    const Database = (await import("better-sqlite3")).default;
    const probe = new Database(file, { readonly: true, fileMustExist: true });
    let fromV5: boolean;
    let version = 0;
    try {
      fromV5 = isMqliteV5(probe);
      if (!fromV5) version = readSchemaVersion(probe); // refuses another application's file
    } finally {
      probe.close();
    }
    if (!fromV5) {
      await emit(flags, {
        text: `${file} is already an mqlite database (schema ${version}): nothing to migrate`,
        json: { location: file, migrated: false, schema_version: version },
      });
      return;
    }

    // A bar on a terminal (for a large copy, or any with --progress); with --progress elsewhere
    // (a log), one line per chunk.
    const bar = new Progress("copying messages");
    let copied = 0;
    const report = (done: number, total: number) => {
      if (bar.visible && (flags.progress || total >= LARGE)) {
        bar.setTotal(total);
        bar.add(done - copied);
      } else if (flags.progress && !bar.visible) {
        process.stderr.write(`copying messages ${done}/${total}\n`);
      }
      copied = done;
    };
    let counts: V5ImportCounts | undefined;
    let sqlite: ReturnType<typeof openDatabase>;
    try {
      sqlite = openDatabase(file, {
        exclusive: true,
        now: Date.now(),
        onV5Progress: report,
        onV5Import: (c) => {
          counts = c;
        },
      });
    } catch (err) {
      if (err instanceof DbLockedError)
        throw new CommandError("db_locked", `${err.message}: stop the broker before migrate-from-mqlite`);
      throw err;
    }
    if (copied > 0 && bar.visible && (flags.progress || copied >= LARGE)) bar.finish();
    sqlite.close();
    if (!counts) throw new CommandError("internal", `${file} was upgraded by another process meanwhile`);
    const c = counts;
    const backup = v5BackupPath(file);
    await emit(flags, {
      text:
        `migrated ${file} from MQLite: ${c.queues} queues, ${c.subscriptions} subscriptions, ` +
        `${c.messages} messages, ${c.dedup} dedup entries, ${c.receipts} receipts (copy kept at ${backup})`,
      json: {
        location: file,
        migrated: true,
        backup,
        queues: c.queues,
        subscriptions: c.subscriptions,
        messages: c.messages,
        dedup_entries: c.dedup,
        receipts: c.receipts,
        receive_attempts: c.receiveAttempts,
      },
    });
  });
}
