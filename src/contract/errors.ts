/**
 * Named errors with stable codes. The `code` of each class is the wire code of the HTTP API
 * (`{"code": ..., "message": ...}`) and `status` its HTTP status, so the embedded engine, the
 * served broker and the remote client raise the very same classes.
 */

/** Every stable error code an mqlite operation can fail with. */
export type ErrorCode =
  | "invalid_argument"
  | "group_required"
  | "unauthenticated"
  | "permission_denied"
  | "not_found"
  | "unimplemented"
  | "already_exists"
  | "name_conflict"
  | "lock_lost"
  | "message_too_large"
  | "canceled"
  | "closed"
  | "db_locked"
  | "schema_version_mismatch"
  | "not_mqlite_database"
  | "storage_full"
  | "outcome_unknown"
  | "resource_exhausted"
  | "unavailable"
  | "internal";

/** Base class of every error mqlite raises on purpose. */
export class MqliteError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  constructor(code: ErrorCode, status: number, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.status = status;
    this.name = new.target.name;
  }
}

/** A request was malformed: bad JSON, an unknown field, an empty name, a negative bound, a bad filter. */
export class InvalidArgumentError extends MqliteError {
  constructor(message: string, options?: ErrorOptions) {
    super("invalid_argument", 400, message, options);
  }
}

/** A send to a `group_fifo` queue carried no `groupId`. */
export class GroupRequiredError extends MqliteError {
  constructor(message = "mqlite: group_id is required on a group_fifo queue") {
    super("group_required", 400, message);
  }
}

/** Missing or wrong bearer token. */
export class UnauthenticatedError extends MqliteError {
  constructor(message = "missing or invalid Bearer token") {
    super("unauthenticated", 401, message);
  }
}

/**
 * The caller may not make this request: a token without the scope the call needs (the message
 * names it), or a cross-site page on a server without auth.
 */
export class PermissionDeniedError extends MqliteError {
  constructor(message: string) {
    super("permission_denied", 403, message);
  }
}

/** The queue, message or path does not exist. */
export class NotFoundError extends MqliteError {
  constructor(message: string) {
    super("not_found", 404, message);
  }
}

/** The method is not available (a non-POST request to an RPC route). */
export class UnimplementedError extends MqliteError {
  constructor(message = "POST required") {
    super("unimplemented", 405, message);
  }
}

/** A single-message send collided with a deduplicated message of the same id and another body. */
export class AlreadyExistsError extends MqliteError {
  constructor(message: string) {
    super("already_exists", 409, message);
  }
}

/** The name is taken by another kind of entity in the one namespace of queues, subscriptions and topics. */
export class NameConflictError extends MqliteError {
  constructor(message: string) {
    super("name_conflict", 409, message);
  }
}

/** The lock token is wrong, stale or expired, and the request is not an exact replay of a settlement. */
export class LockLostError extends MqliteError {
  constructor(message = "mqlite: lock lost") {
    super("lock_lost", 409, message);
  }
}

/** A message body or a request is over its size limit. */
export class MessageTooLargeError extends MqliteError {
  constructor(message: string) {
    super("message_too_large", 413, message);
  }
}

/** The caller cancelled the operation before it ran. Its wire code keeps the original's spelling, `canceled`. */
export class CancelledError extends MqliteError {
  constructor(message = "mqlite: operation cancelled") {
    super("canceled", 499, message);
  }
}

/** @deprecated Use `CancelledError` (the same class). */
export const CanceledError = CancelledError;
/** @deprecated Use `CancelledError`. */
export type CanceledError = CancelledError;

/** The broker is closed (or closing) and admits no new work. */
export class ClosedError extends MqliteError {
  constructor(message = "mqlite: broker is closed") {
    super("closed", 503, message);
  }
}

/** `exclusive: true` was asked for and another process holds the database. */
export class DbLockedError extends MqliteError {
  constructor(message: string, options?: ErrorOptions) {
    super("db_locked", 500, message, options);
  }
}

/** The database was written by a newer (or unknown) schema version and is left untouched. */
export class SchemaVersionMismatchError extends MqliteError {
  constructor(message: string) {
    super("schema_version_mismatch", 500, message);
  }
}

/** The file is not an mqlite database (another application's SQLite file, or not SQLite at all). */
export class NotMqliteDatabaseError extends MqliteError {
  constructor(message: string, options?: ErrorOptions) {
    super("not_mqlite_database", 500, message, options);
  }
}

/** The disk or database is full; nothing of the failed operation was stored. */
export class StorageFullError extends MqliteError {
  constructor(message: string, options?: ErrorOptions) {
    super("storage_full", 507, message, options);
  }
}

/** A remote write whose commit acknowledgement was lost: it may or may not have applied. */
export class OutcomeUnknownError extends MqliteError {
  constructor(message: string, options?: ErrorOptions) {
    super("outcome_unknown", 503, message, options);
  }
}

/** A server-wide bound is reached (too many parked long-polls): retry later. */
export class ResourceExhaustedError extends MqliteError {
  constructor(message: string, options?: ErrorOptions) {
    super("resource_exhausted", 429, message, options);
  }
}

/**
 * The remote client could not reach the broker (refused, reset, DNS, TLS): a call that failed
 * before its request was sent did not happen; one cut while in flight may or may not have.
 */
export class UnavailableError extends MqliteError {
  constructor(message: string, options?: ErrorOptions) {
    super("unavailable", 503, message, options);
  }
}

/** Anything else. */
export class InternalError extends MqliteError {
  constructor(message: string, options?: ErrorOptions) {
    super("internal", 500, message, options);
  }
}

const byCode: Record<ErrorCode, (message: string) => MqliteError> = {
  invalid_argument: (m) => new InvalidArgumentError(m),
  group_required: (m) => new GroupRequiredError(m),
  unauthenticated: (m) => new UnauthenticatedError(m),
  permission_denied: (m) => new PermissionDeniedError(m),
  not_found: (m) => new NotFoundError(m),
  unimplemented: (m) => new UnimplementedError(m),
  already_exists: (m) => new AlreadyExistsError(m),
  name_conflict: (m) => new NameConflictError(m),
  lock_lost: (m) => new LockLostError(m),
  message_too_large: (m) => new MessageTooLargeError(m),
  canceled: (m) => new CancelledError(m),
  closed: (m) => new ClosedError(m),
  db_locked: (m) => new DbLockedError(m),
  schema_version_mismatch: (m) => new SchemaVersionMismatchError(m),
  not_mqlite_database: (m) => new NotMqliteDatabaseError(m),
  storage_full: (m) => new StorageFullError(m),
  outcome_unknown: (m) => new OutcomeUnknownError(m),
  resource_exhausted: (m) => new ResourceExhaustedError(m),
  unavailable: (m) => new UnavailableError(m),
  internal: (m) => new InternalError(m),
};

/** Rebuilds the named error for a wire code (used by the remote client). Unknown codes become `InternalError`. */
export function errorFromCode(code: string, message: string): MqliteError {
  const make = byCode[code as ErrorCode];
  return make ? make(message) : new InternalError(message);
}
