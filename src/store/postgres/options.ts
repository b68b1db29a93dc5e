import { InvalidArgumentError } from "../../contract/errors.js";
import type { Logger } from "../../contract/logger.js";
import type { Clock } from "../../core/clock.js";
import type { DlqBounds } from "../../core/dlq-bounds.js";

/** Options of a broker on PostgreSQL (`openBroker("postgres://…")`). */
export interface PostgresBrokerOptions {
  /** Source of "now" (epoch ms) for every stored time; never the server's `now()`. Default: the wall clock. */
  clock?: Clock;
  /** The schema that holds the broker's tables (created and migrated at open). Default: the DSN's `?schema=`, else `mqlite`. */
  schema?: string;
  /** Largest message body in bytes. Default 1 MiB. */
  maxMessageBytes?: number;
  /**
   * Take part in the election of the node that runs the background loops (reaper, scheduler, TTL,
   * janitors, retention). Default true; with false this node never runs them (tests call
   * `runMaintenanceOnce`).
   */
  background?: boolean;
  /** Broker-wide DLQ retention that queues inherit. Default: no bounds. */
  dlqRetention?: Partial<DlqBounds>;
  /** Where warnings go. Default: stderr. */
  logger?: Logger;
  /** Connections in this node's pool (the listening connection is extra). Default 10. */
  poolSize?: number;
  /** How often a standby node tries to take over the background loops, and the leader checks its lock (ms). Default 1000. */
  leaderPollMs?: number;
  /**
   * PostgreSQL's `synchronous_commit` for this node's writes. Default `on` (a commit is durable when
   * acknowledged). `off` acknowledges before the WAL flush: a crash of the database server may lose
   * the last moments of commits (never consistency), about what SQLite's `synchronous=normal` risks
   * on power loss, for much higher throughput under concurrency.
   */
  synchronousCommit?: SynchronousCommit;
  /** Transient failures (connection reset, serialization failure, deadlock) are retried this many times. Default 5. */
  maxRetries?: number;
}

export const DEFAULT_SCHEMA = "mqlite";

export type SynchronousCommit = "on" | "off" | "local" | "remote_write" | "remote_apply";
const SYNC_COMMITS: readonly SynchronousCommit[] = ["on", "off", "local", "remote_write", "remote_apply"];

export function requireSynchronousCommit(value: string | undefined): SynchronousCommit {
  const v = (value ?? "on") as SynchronousCommit;
  if (!SYNC_COMMITS.includes(v)) {
    throw new InvalidArgumentError(`mqlite: synchronous_commit must be one of ${SYNC_COMMITS.join(", ")}`);
  }
  return v;
}

/** A DSN this engine opens. */
export type PostgresDsn = `postgres://${string}` | `postgresql://${string}`;

export function isPostgresDsn(location: string): location is PostgresDsn {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** A schema name we are willing to quote into DDL: a plain identifier. */
export function requireSchemaName(schema: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    throw new InvalidArgumentError(
      `mqlite: schema "${schema}" must be a plain identifier (letters, digits, _; at most 63)`,
    );
  }
  return schema;
}

/** The DSN without its password, for `status().location` and logs. */
export function redactDsn(dsn: string): string {
  try {
    const url = new URL(dsn);
    if (url.password) url.password = "***";
    return url.toString();
  } catch {
    return dsn.replace(/:[^:@/]*@/, ":***@");
  }
}

/**
 * Takes the broker's own `schema` parameter out of a DSN (`postgres://…/db?schema=orders`), so that
 * `MQLITE_DB` alone can choose the schema; the driver never sees it.
 */
export function splitSchemaParam(dsn: string): { dsn: string; schema: string | undefined } {
  const q = dsn.indexOf("?");
  if (q < 0) return { dsn, schema: undefined };
  const params = new URLSearchParams(dsn.slice(q + 1));
  const schema = params.get("schema") ?? undefined;
  if (schema === undefined) return { dsn, schema };
  params.delete("schema");
  const rest = params.toString();
  return { dsn: rest ? `${dsn.slice(0, q)}?${rest}` : dsn.slice(0, q), schema };
}
