import { fstatSync, statSync } from "node:fs";
import { CommandError } from "../errors.js";

let guarded = false;

/**
 * Stdout errors (EPIPE when the reader went away, ENOSPC) are reported to whoever awaits the write;
 * a listener stays installed so that one arriving later (`mqlite help | head -1`) is not an
 * uncaught exception.
 */
export function guardStdout(): void {
  if (guarded) return;
  guarded = true;
  process.stdout.on("error", () => {});
}

/** True when fd 1 is the null device (a closed stdout is reopened there by Node at startup). */
function stdoutIsNull(): boolean {
  const out = fstatSync(1);
  if (!out.isCharacterDevice()) return false;
  try {
    return out.rdev === statSync("/dev/null").rdev;
  } catch {
    return false;
  }
}

/**
 * Fails before anything is taken from the broker when stdout cannot deliver: closed (`>&-`, which
 * Node turns into /dev/null) or the null device, where messages completed on printing would be
 * lost unread.
 */
export function requireDeliveringStdout(): void {
  let nowhere = true; // fd 1 that cannot even be inspected cannot be written either
  try {
    nowhere = stdoutIsNull();
  } catch {}
  if (nowhere)
    throw new CommandError(
      "stdout_failed",
      "stdout is closed or /dev/null: the messages would be lost, so nothing was received " +
        "(redirect to a file, or use --no-ack)",
    );
}

/** Writes to stdout and resolves once the text has been handed to the OS (rejects if it could not be). */
export function writeStdout(text: string): Promise<void> {
  guardStdout();
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
