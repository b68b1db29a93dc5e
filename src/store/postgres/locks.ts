import { createHash } from "node:crypto";
import type { Conn } from "./db.js";

/**
 * Advisory locks. Transaction-scoped locks use the 64-bit key space, session locks the two-int4
 * space; PostgreSQL keeps the two apart, so a node's long-held leader lock can never collide with
 * a short-lived transaction lock. Every key is derived from the schema, so brokers in different
 * schemas of one database never wait on each other.
 */
export type XactLockKind =
  /** A strict_fifo queue: its sends (id order = commit order) and its claims (one in flight). */
  | "queue"
  /** One ordering group of a queue: its sends, so ids within a group follow commit order. */
  | "group"
  /** A dedup key of a queue: concurrent sends of one key see each other. */
  | "dedup"
  /** A unique key of a queue: concurrent sends of one key see each other. */
  | "unique"
  /** A claim gate's subject: its locked count and token bucket are read and written by one claim at a time. */
  | "gate"
  /** A receive attempt id of a queue: a retried receive replays, never claims twice. */
  | "attempt"
  /** The one namespace of queues, subscriptions and topics: checks and changes are serialised. */
  | "namespace"
  /** The event log: appends one at a time, so ids commit in order. */
  | "event_log"
  /** A debounce window of a queue: concurrent sends of one key see each other. */
  | "debounce";

export function xactLockKey(schema: string, kind: XactLockKind, ...parts: string[]): bigint {
  const h = createHash("sha256").update(`${schema}\u0000${kind}`);
  for (const p of parts) h.update(`\u0000${Buffer.byteLength(p)}:${p}`);
  return h.digest().readBigInt64BE(0);
}

/** Takes the given transaction locks in ascending key order (so two transactions never deadlock on them). */
export async function lockAll(c: Conn, keys: Iterable<bigint>): Promise<void> {
  const sorted = [...new Set(keys)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (sorted.length === 0) return;
  if (sorted.length === 1) {
    await c.q("SELECT pg_advisory_xact_lock($1::bigint)", [sorted[0]!.toString()]);
    return;
  }
  await c.q("SELECT pg_advisory_xact_lock(k) FROM unnest($1::bigint[]) AS t(k)", [sorted.map(String)]);
}

/** Session lock classes (the first int4 of a two-key advisory lock). */
export const SESSION_LOCK = { leader: 0x6d716c01, migrate: 0x6d716c02 } as const;

/** The second int4 of a session lock: the schema's. */
export function schemaLockId(schema: string): number {
  return createHash("sha256").update(schema).digest().readInt32BE(0);
}
