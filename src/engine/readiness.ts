import { statfsSync } from "node:fs";
import { dirname } from "node:path";
import { ClosedError, DbLockedError, StorageFullError, UnavailableError } from "../contract/errors.js";
import type { NotReadyReason, Readiness } from "../contract/types.js";

/** Free space under which a database file's disk counts as full: one largest request (32 MiB). */
export const MIN_FREE_BYTES = 32 * 1024 * 1024;

/**
 * The readiness an error means, for every store alike: a closed broker is `closing`, a full disk or
 * database `storage_full`, a lock held elsewhere `db_locked`, a database that does not answer
 * `db_unavailable`; any other error says nothing about readiness (undefined).
 */
export function notReadyFor(err: unknown): Readiness | undefined {
  let reason: NotReadyReason;
  if (err instanceof ClosedError) reason = "closing";
  else if (err instanceof StorageFullError) reason = "storage_full";
  else if (err instanceof DbLockedError) reason = "db_locked";
  else if (err instanceof UnavailableError) reason = "db_unavailable";
  else return undefined;
  return { ready: false, reason, message: err.message };
}

/**
 * Whether a database file can take writes, without writing: the last commit's store failure (a
 * full disk or database, a lock another process holds; cleared by the next commit), else the free
 * space of the file's disk.
 */
export function fileReadiness(
  location: string,
  storeFailure: StorageFullError | DbLockedError | undefined,
): Readiness {
  if (storeFailure) return notReadyFor(storeFailure)!;
  if (location !== ":memory:" && location !== "") {
    try {
      const fs = statfsSync(dirname(location));
      const free = fs.bavail * fs.bsize;
      if (free < MIN_FREE_BYTES) {
        return {
          ready: false,
          reason: "storage_full",
          message: `mqlite: ${free} bytes free on the database's disk`,
        };
      }
    } catch {
      // statfs unsupported here: the last commit's outcome is all there is to go by
    }
  }
  return { ready: true };
}
