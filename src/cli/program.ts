import { Command, CommanderError } from "commander";
import { MqliteError } from "../contract/errors.js";
import { VERSION } from "../version.js";
import { commands } from "./commands/index.js";
import { CliError } from "./errors.js";

/** The `mqlite` program with every command registered. */
export function program(): Command {
  const p = new Command("mqlite")
    .description("A message broker and job queue whose whole state is one SQLite file.")
    .version(VERSION, "-v, --version")
    .showHelpAfterError()
    .exitOverride();
  for (const register of commands) register(p);
  return p;
}

/** Runs the CLI; a failure prints `mqlite: <message>` and exits non-zero. */
export async function runCli(argv: string[]): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode);
    const known = err instanceof CliError || err instanceof MqliteError;
    const message = err instanceof Error ? err.message.replace(/^mqlite: /, "") : String(err);
    process.stderr.write(`mqlite: ${known ? message : ((err as Error).stack ?? message)}\n`);
    process.exit(err instanceof CliError ? err.exitCode : 1);
  }
}
