import { Command, CommanderError } from "commander";
import { MqliteError } from "../contract/errors.js";
import { VERSION } from "../version.js";
import { needed } from "./commands/index.js";
import { CliError, CommandError, USAGE_EXIT } from "./errors.js";
import { guardStdout } from "./output/write.js";

/** The `mqlite` program with the commands `argv` needs registered (all of them for help). */
export async function program(argv: string[] = process.argv): Promise<Command> {
  const p = new Command("mqlite")
    .description("A message broker and job queue whose whole state is one SQLite file.")
    .version(VERSION, "-v, --version")
    .showHelpAfterError("(run mqlite help <command> for its usage)")
    .configureOutput({
      // Usage errors carry a code like every other failure: `error: invalid_argument: …`.
      outputError: (text, write) => write(text.replace(/^error: /, "error: invalid_argument: ")),
    })
    .exitOverride();
  for (const entry of needed(argv)) (await entry.load())(p);
  p.addHelpText(
    "after",
    `
Commands other than serve and mcp run against a served broker (--endpoint or MQLITE_ENDPOINT, with
--token or MQLITE_TOKEN) or open a database file in this process (--db or MQLITE_DB). An endpoint wins.`,
  );
  return p;
}

/** The one line a failure prints, and the exit status. */
export function describeFailure(err: unknown): { line: string; exitCode: number } {
  if (err instanceof CommandError)
    return { line: `error: ${err.code}: ${err.message}`, exitCode: err.exitCode };
  if (err instanceof CliError) return { line: `mqlite: ${err.message}`, exitCode: err.exitCode };
  if (err instanceof MqliteError) return { line: `error: ${err.code}: ${err.message}`, exitCode: 1 };
  const e = err as Error;
  return { line: `error: internal: ${e?.stack ?? String(err)}`, exitCode: 1 };
}

/**
 * Runs the CLI. A failure prints one line on stderr, `error: <code>: <message>` (the broker's
 * wire code, or invalid_argument for a command line that cannot run), and exits non-zero: 2 for
 * usage errors, 1 otherwise.
 */
export async function runCli(argv: string[]): Promise<void> {
  guardStdout();
  try {
    await (await program(argv)).parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : USAGE_EXIT);
    const { line, exitCode } = describeFailure(err);
    process.stderr.write(`${line}\n`);
    process.exit(exitCode);
  }
}
