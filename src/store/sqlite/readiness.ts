import { statfsSync } from "node:fs";
import { dirname } from "node:path";
import type { DbLockedError, StorageFullError } from "../../contract/errors.js";
import { notReadyFor } from "../../contract/readiness.js";
import type { Readiness } from "../../contract/types.js";

/** Free space under which a database file's disk counts as full: one largest request (32 MiB). */
export const MIN_FREE_BYTES = 32 * 1024 * 1024;

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
