import {
  InternalError,
  InvalidArgumentError,
  MqliteError,
  NotFoundError,
  OutcomeUnknownError,
  StorageFullError,
} from "../../contract/errors.js";
import { messageOf } from "../../contract/message-of.js";

/** An error reported by the server carries a SQLSTATE `code`. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * The server rolled the transaction back for a reason a retry can cure: a serialization failure, a
 * deadlock, or the server shutting down or starting up.
 */
export function isTransientServerError(err: unknown): boolean {
  const code = sqlState(err);
  if (!code) return false;
  return (
    code === "40001" ||
    code === "40P01" ||
    code === "55P03" ||
    code === "57P01" ||
    code === "57P02" ||
    code === "57P03" ||
    code === "53300" ||
    code.startsWith("08")
  );
}

/** The connection broke (no server answer): whatever was sent may or may not have been executed. */
export function isConnectionError(err: unknown): boolean {
  if (err instanceof MqliteError) return false;
  if (sqlState(err)) return sqlState(err)!.startsWith("08") || sqlState(err)!.startsWith("57P");
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === "string" ? e.code : "";
  if (
    [
      "ECONNRESET",
      "ECONNREFUSED",
      "EPIPE",
      "ETIMEDOUT",
      "ENOTFOUND",
      "EHOSTUNREACH",
      "ECONNABORTED",
    ].includes(code)
  ) {
    return true;
  }
  const message = typeof e?.message === "string" ? e.message : "";
  return /Connection terminated|connection error|not queryable|Client was closed|timeout exceeded when trying to connect|Connection ended/i.test(
    message,
  );
}

/** Maps a driver or server error to the contract's named errors (already named errors pass through). */
export function mapPgError(err: unknown): Error {
  if (err instanceof MqliteError) return err;
  const code = sqlState(err);
  const message = messageOf(err);
  switch (code) {
    case "23503":
      return new NotFoundError("mqlite: queue not found");
    case "22021":
    case "22P05":
      return new InvalidArgumentError(
        `mqlite: a text field holds a character PostgreSQL cannot store: ${message}`,
      );
    case "54000":
      return new InvalidArgumentError(`mqlite: a value is too long to index: ${message}`);
    case "53100":
      return new StorageFullError(`mqlite: the database server is out of disk space: ${message}`, {
        cause: err,
      });
    default:
      return new InternalError(`mqlite: postgres: ${message}`, { cause: err });
  }
}

/** The write's commit acknowledgement was lost. */
export function outcomeUnknown(err: unknown): OutcomeUnknownError {
  const message = messageOf(err);
  return new OutcomeUnknownError(
    `mqlite: the connection to PostgreSQL broke while the write was committing; it may or may not have applied (${message})`,
    { cause: err },
  );
}
