import { Command, CommanderError } from "commander";
import { MqliteError } from "../contract/errors.js";
import { VERSION } from "../version.js";
import { FlagError, goFlags } from "./argv.js";
import { commands, needed } from "./commands/index.js";
import { CliError, CommandError, USAGE_EXIT, UsageError } from "./errors.js";
import { checkOutput } from "./options.js";
import { guardStdout } from "./output/write.js";
import { usageLine } from "./usage.js";

/** What the parser would have printed on stderr; runCli decides whether it is shown. */
let parserMessage = "";

/** The `mqlite` program with the commands `argv` needs registered (all of them for help). */
export async function program(argv: string[] = process.argv): Promise<Command> {
  const p = new Command("mqlite")
    .description("A message broker and job queue whose whole state is one SQLite file.")
    .version(VERSION, "-v, --version")
    .configureOutput({
      outputError: (text) => {
        parserMessage += text;
      },
    })
    .exitOverride();
  for (const entry of needed(argv)) (await entry.load())(p);
  p.hook("preAction", (_program, action) => checkOutput(action.opts().output));
  p.addHelpText(
    "after",
    `
Commands other than serve and mcp run against a served broker (--endpoint or MQLITE_ENDPOINT, with
--token or MQLITE_TOKEN), or else open a database file in this process (--db or MQLITE_DB, default
./mq.db). An endpoint wins. Flags take one dash or two (-max 5, --max=5), before or after arguments.`,
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

const HELP = ["help", "-h", "--help"];
const VERSION_NAMES = ["version", "-v", "--version"];
/** Parser errors that mean "wrong number of arguments": the original's `error: usage: …`, exit 1. */
const ARITY = new Set(["commander.missingArgument", "commander.excessArguments"]);

function known(name: string): boolean {
  return HELP.includes(name) || VERSION_NAMES.includes(name) || commands.some((c) => c.names.includes(name));
}

function fail(line: string, exitCode: number): never {
  process.stderr.write(`${line}\n`);
  process.exit(exitCode);
}

/**
 * Runs the CLI as the original does: the command comes first, flags in Go's syntax anywhere after
 * it. No command prints the usage on stdout and exits 2, as does an unknown command (named on
 * stderr); a flag error exits 2; every other failure prints one `error: <code>: <message>` line
 * on stderr and exits 1.
 */
export async function runCli(argv: string[]): Promise<void> {
  guardStdout();
  const [node = "node", script = "mqlite", given, ...rest] = argv;
  // `-v` and `--version` print what `version` prints: `mqlite <version>`.
  const name = given === "-v" || given === "--version" ? "version" : given;
  if (name === undefined || !known(name)) {
    if (name !== undefined) process.stderr.write(`unknown command: ${name}\n`);
    process.stdout.write((await program([node, script])).helpInformation());
    process.exit(USAGE_EXIT);
  }
  const p = await program([node, script, name, ...rest]);
  const cmd = p.commands.find((c) => c.name() === name || c.aliases().includes(name));
  let args = rest;
  try {
    if (cmd) args = goFlags(rest, cmd.options);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    fail(`${err.message}\n${cmd?.helpInformation() ?? ""}`.trimEnd(), USAGE_EXIT);
  }
  try {
    await p.parseAsync([node, script, name, ...args]);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) process.exit(0);
      if (ARITY.has(err.code) && cmd) {
        const usage = new UsageError(usageLine(cmd.name(), cmd.usage()));
        fail(describeFailure(usage).line, usage.exitCode);
      }
      fail(parserMessage.trimEnd(), USAGE_EXIT);
    }
    const { line, exitCode } = describeFailure(err);
    fail(line, exitCode);
  }
}
