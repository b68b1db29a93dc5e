import { fstatSync } from "node:fs";
import { CommandError } from "../errors.js";

let guarded = false;

/**
 * Stdout errors (EPIPE when the reader went away, ENOSPC) are reported to whoever awaits the write;
 * a listener stays installed so that one arriving later is not an uncaught exception.
 */
function guard(): void {
  if (guarded) return;
  guarded = true;
  process.stdout.on("error", () => {});
}

/** Fails before anything is taken from the broker when stdout is closed (`>&-`): the output would be lost. */
export function requireWritableStdout(): void {
  try {
    fstatSync(1);
  } catch (err) {
    throw new CommandError(
      "stdout_failed",
      `stdout cannot be written (${(err as NodeJS.ErrnoException).code}): nothing was received`,
    );
  }
}

/** Writes to stdout and resolves once the text has been handed to the OS (rejects if it could not be). */
export function writeStdout(text: string): Promise<void> {
  guard();
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (err) => (err ? reject(err) : resolve()));
  });
}

/** Prints a JSON value (two-space indent) and a newline. */
export function printJson(value: unknown): Promise<void> {
  return writeStdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** Prints text, adding the final newline when it is missing. */
export function printText(text: string): Promise<void> {
  return writeStdout(text.endsWith("\n") ? text : `${text}\n`);
}
