import { ClosedError, DbLockedError, StorageFullError, UnavailableError } from "./errors.js";
import type { NotReadyReason, Readiness } from "./types.js";

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
