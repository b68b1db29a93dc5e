/** A startup or usage failure: printed as `mqlite: <message>` and the process exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** Exit status of a command line whose flags could not be parsed, or with no or an unknown command. */
export const USAGE_EXIT = 2;

/** A command's failure with a code, printed as `error: <code>: <message>` like the broker's own errors. */
export class CommandError extends CliError {
  constructor(
    readonly code: string,
    message: string,
    exitCode = 1,
  ) {
    super(message, exitCode);
    this.name = "CommandError";
  }
}

/**
 * A command line that cannot run as written (wrong arity, a bad value, conflicting flags).
 * Printed as `error: invalid_argument: <message>`, exit status 1 as in the original (only flag
 * syntax errors exit 2); nothing was sent to the broker.
 */
export class UsageError extends CommandError {
  constructor(message: string) {
    super("invalid_argument", message, 1);
    this.name = "UsageError";
  }
}
