import { InvalidArgumentError } from "../../contract/errors.js";

/** SQLite's `synchronous` setting: `normal` (default, durable across process crashes), `full`, `off`, `extra`. */
export type SyncMode = "normal" | "full" | "off" | "extra";

const modes: readonly SyncMode[] = ["normal", "full", "off", "extra"];

/** Parses a sync mode case-insensitively; anything else is an `InvalidArgumentError`. */
export function parseSyncMode(value: string | undefined): SyncMode {
  if (value === undefined || value === "") return "normal";
  const lower = value.toLowerCase() as SyncMode;
  if (!modes.includes(lower)) {
    throw new InvalidArgumentError(
      `mqlite: synchronous must be one of normal, full, off, extra (got "${value}")`,
    );
  }
  return lower;
}
