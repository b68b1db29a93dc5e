import { type DlqBounds, effectiveBound } from "../../core/dlq-bounds.js";
import type { QueueRow } from "../../core/queue-config.js";
import type { Conn } from "./db.js";
import { lockAll, xactLockKey } from "./locks.js";

const RETENTION_BATCH = 1000;
const RETENTION_MAX_BATCHES = 100;

const CANDIDATES = `
  SELECT id, group_id FROM messages
  WHERE queue = $1 AND state = 'dead_lettered' AND ($2::bigint = 0 OR enqueued_at < $2)
  ORDER BY id LIMIT $3`;

/** One at a time: a redriven copy gives up its unique key if a live message (maybe one redriven just before) holds it. */
const CANDIDATES_AMONG = `
  SELECT id, group_id FROM messages
  WHERE queue = $1 AND state = 'dead_lettered' AND ($2::bigint = 0 OR enqueued_at < $2) AND id = ANY($3::bigint[])
  ORDER BY id`;

const REDRIVE_IN_PLACE = `
  UPDATE messages SET state = 'active', delivery_count = 0, lock_token = NULL, locked_until = 0, visible_at = 0,
    expires_at = CASE WHEN expires_at <= $2 THEN 0 ELSE expires_at END,
    dead_letter_reason = NULL, dead_letter_description = NULL,
    settled_at = 0, redrive_count = redrive_count + 1, cancel_requested = 0,
    unique_key = CASE WHEN unique_key IS NOT NULL AND EXISTS (SELECT 1 FROM messages l
      WHERE l.queue = messages.queue AND l.unique_key = messages.unique_key
        AND l.state IN ('active', 'locked', 'deferred', 'scheduled')) THEN NULL ELSE unique_key END
  WHERE id = $1 AND state = 'dead_lettered'
  RETURNING id`;

/** Copies into the target in seq order (fresh seqs, enqueued now, no TTL) and deletes the originals. */
const REDRIVE_TO = `
  WITH src AS (
    SELECT m.* FROM messages m JOIN unnest($1::bigint[]) AS s(id) ON m.id = s.id
    WHERE m.state = 'dead_lettered' ORDER BY m.id FOR UPDATE OF m),
  ins AS (
    INSERT INTO messages (queue, state, priority, visible_at, enqueued_at, expires_at, message_id, correlation_id,
      reply_to, group_id, content_type, subject, properties, body)
    SELECT $2, 'active', priority, $3, $3, 0, message_id, correlation_id, reply_to, group_id, content_type,
      subject, properties, body
    FROM src ORDER BY id
    RETURNING id),
  del AS (DELETE FROM messages WHERE id IN (SELECT id FROM src) RETURNING id)
  SELECT (SELECT count(*) FROM ins)::int AS moved`;

const PURGE_OLDEST = `
  DELETE FROM messages WHERE id IN (
    SELECT id FROM messages WHERE queue = $1 AND state = 'dead_lettered' AND ($2::bigint = 0 OR enqueued_at < $2)
    ORDER BY id LIMIT $3)
  RETURNING 1`;

const PURGE_ALL = `
  WITH d AS (DELETE FROM messages WHERE queue = $1 AND state = 'dead_lettered' AND ($2::bigint = 0 OR enqueued_at < $2)
             RETURNING 1)
  SELECT count(*)::int AS n FROM d`;

const QUEUES_WITH_DEAD_LETTERS = `
  SELECT q.* FROM queues q
  WHERE EXISTS (SELECT 1 FROM messages m WHERE m.queue = q.name AND m.state = 'dead_lettered')`;

const DELETE_OLDER_THAN = `
  WITH d AS (DELETE FROM messages WHERE id IN (
      SELECT id FROM messages WHERE queue = $1 AND state = 'dead_lettered' AND enqueued_at < $2
      ORDER BY id LIMIT ${RETENTION_BATCH}) RETURNING 1)
  SELECT count(*)::int AS n FROM d`;

const NTH_NEWEST = `
  SELECT id FROM messages WHERE queue = $1 AND state = 'dead_lettered' ORDER BY id DESC LIMIT 1 OFFSET $2`;

const OVER_BYTES = `
  SELECT id FROM (SELECT id, sum(octet_length(body)) OVER (ORDER BY id DESC) AS total
                  FROM messages WHERE queue = $1 AND state = 'dead_lettered') t
  WHERE total > $2 ORDER BY id DESC LIMIT 1`;

const DELETE_UP_TO = `
  WITH d AS (DELETE FROM messages WHERE id IN (
      SELECT id FROM messages WHERE queue = $1 AND state = 'dead_lettered' AND id <= $2
      ORDER BY id LIMIT ${RETENTION_BATCH}) RETURNING 1)
  SELECT count(*)::int AS n FROM d`;

/** Redrive, purge and retention on PostgreSQL. */
export class PgDeadLetters {
  constructor(private readonly schema: string) {}

  /** The dead letters a redrive would move, oldest first. */
  async select(
    c: Conn,
    queue: string,
    max: number,
    cutoff: number,
    only?: number[],
  ): Promise<{ id: number; group_id: string | null }[]> {
    if (!only) return c.q(CANDIDATES, [queue, cutoff, max > 0 ? max : null]);
    const rows = await c.q<{ id: number; group_id: string | null }>(CANDIDATES_AMONG, [queue, cutoff, only]);
    return max > 0 ? rows.slice(0, max) : rows;
  }

  /**
   * Moves the given dead letters back to active: in place (same seq, count reset, a lapsed TTL
   * cleared) or into `target` (fresh seqs under the target's ordering locks). Returns how many moved.
   */
  async redrive(
    c: Conn,
    rows: { id: number; group_id: string | null }[],
    target: { name: string; ordering_mode: string } | undefined,
    now: number,
  ): Promise<number> {
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => r.id);
    if (!target) {
      let moved = 0;
      for (const id of ids) moved += (await c.q(REDRIVE_IN_PLACE, [id, now])).length;
      return moved;
    }
    const keys: bigint[] = [];
    if (target.ordering_mode === "strict_fifo") keys.push(xactLockKey(this.schema, "queue", target.name));
    else {
      for (const r of rows) {
        if (r.group_id !== null) keys.push(xactLockKey(this.schema, "group", target.name, r.group_id));
      }
    }
    await lockAll(c, keys);
    const [row] = await c.q<{ moved: number }>(REDRIVE_TO, [ids, target.name, now]);
    return row?.moved ?? 0;
  }

  async purge(c: Conn, queue: string, max: number, cutoff: number): Promise<number> {
    if (max > 0) return (await c.q(PURGE_OLDEST, [queue, cutoff, max])).length;
    const [row] = await c.q<{ n: number }>(PURGE_ALL, [queue, cutoff]);
    return row?.n ?? 0;
  }

  /** One retention pass over every queue with dead letters; returns how many were dropped. */
  async enforceRetention(c: Conn, defaults: DlqBounds, now: number): Promise<number> {
    let dropped = 0;
    for (const q of await c.q<QueueRow>(QUEUES_WITH_DEAD_LETTERS)) {
      const age = effectiveBound(q.dlq_max_age_ms, defaults.maxAgeMs);
      const count = effectiveBound(q.dlq_max_count, defaults.maxCount);
      const bytes = effectiveBound(q.dlq_max_bytes, defaults.maxBytes);
      if (age > 0) dropped += await batched(c, DELETE_OLDER_THAN, [q.name, now - age]);
      if (count > 0) {
        const [edge] = await c.q<{ id: number }>(NTH_NEWEST, [q.name, count]);
        if (edge) dropped += await batched(c, DELETE_UP_TO, [q.name, edge.id]);
      }
      if (bytes > 0) {
        const [edge] = await c.q<{ id: number }>(OVER_BYTES, [q.name, bytes]);
        if (edge) dropped += await batched(c, DELETE_UP_TO, [q.name, edge.id]);
      }
    }
    return dropped;
  }
}

async function batched(c: Conn, sql: string, args: unknown[]): Promise<number> {
  let total = 0;
  for (let i = 0; i < RETENTION_MAX_BATCHES; i++) {
    const [row] = await c.q<{ n: number }>(sql, args);
    const n = row?.n ?? 0;
    total += n;
    if (n < RETENTION_BATCH) break;
  }
  return total;
}
