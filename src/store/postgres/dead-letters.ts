import type { Async } from "../../core/port.js";
import type { DeadLetter, DeadLetterOps, DeadLetterQueue } from "../../core/verbs/dead-letters.js";
import { RETENTION_BATCH } from "../../core/verbs/dead-letters.js";
import type { Conn } from "./db.js";
import { lockAll, xactLockKey } from "./locks.js";
import { pgName } from "./names.js";

const QUEUE_ORDERING = "SELECT ordering_mode FROM queues WHERE name = $1";

const CANDIDATES = `
  SELECT id, group_id FROM messages
  WHERE queue = $1 AND state = 'dead_lettered' AND ($2::bigint = 0 OR enqueued_at < $2)
  ORDER BY id LIMIT $3`;

/** The asked dead letters, each reached by its id (see `seekById` in core/lease-fence.ts). */
const CANDIDATES_AMONG = `
  SELECT id, group_id FROM messages
  WHERE id = ANY($3::bigint[]) AND (queue = $1 AND state = 'dead_lettered' AND ($2::bigint = 0 OR enqueued_at < $2)) IS TRUE
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
  WITH d AS (DELETE FROM messages WHERE id IN (
      SELECT id FROM messages WHERE queue = $1 AND state = 'dead_lettered' AND ($2::bigint = 0 OR enqueued_at < $2)
      ORDER BY id LIMIT $3)
    RETURNING 1)
  SELECT count(*)::int AS n FROM d`;

const PURGE_ALL = `
  WITH d AS (DELETE FROM messages WHERE queue = $1 AND state = 'dead_lettered' AND ($2::bigint = 0 OR enqueued_at < $2)
             RETURNING 1)
  SELECT count(*)::int AS n FROM d`;

const QUEUES_WITH_DEAD_LETTERS = `
  SELECT q.name, q.dlq_max_age_ms, q.dlq_max_count, q.dlq_max_bytes FROM queues q
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

/** The dead-letter statements on PostgreSQL, on one connection (the rules are in core/verbs/dead-letters.ts). */
export class PgDeadLetterOps implements Async<DeadLetterOps> {
  constructor(protected readonly c: Conn) {}

  async queueOrdering(a: { name: string }): Promise<string | undefined> {
    const [row] = await this.c.q<{ ordering_mode: string }>(QUEUE_ORDERING, [pgName(a.name)]);
    return row?.ordering_mode;
  }

  async deadLetters(a: {
    queue: string;
    cutoff: number;
    limit: number;
    only?: number[];
  }): Promise<DeadLetter[]> {
    const queue = pgName(a.queue);
    const rows = a.only
      ? await this.c.q<{ id: number; group_id: string | null }>(CANDIDATES_AMONG, [queue, a.cutoff, a.only])
      : await this.c.q<{ id: number; group_id: string | null }>(CANDIDATES, [
          queue,
          a.cutoff,
          a.limit > 0 ? a.limit : null,
        ]);
    return rows.map((r) => ({ id: r.id, groupId: r.group_id }));
  }

  async redriveInPlace(a: { id: number; now: number }): Promise<boolean> {
    return (await this.c.q(REDRIVE_IN_PLACE, [a.id, a.now])).length > 0;
  }

  /** Under the target's ordering locks (the queue's for strict FIFO, else each group's), as a send takes them. */
  async redriveTo(a: {
    letters: DeadLetter[];
    target: string;
    ordering: string;
    now: number;
  }): Promise<number> {
    const schema = this.c.schema;
    const target = pgName(a.target);
    const keys: bigint[] = [];
    if (a.ordering === "strict_fifo") keys.push(xactLockKey(schema, "queue", target));
    else {
      for (const l of a.letters) {
        if (l.groupId !== null) keys.push(xactLockKey(schema, "group", target, l.groupId));
      }
    }
    await lockAll(this.c, keys);
    const ids = a.letters.map((l) => l.id);
    const [row] = await this.c.q<{ moved: number }>(REDRIVE_TO, [ids, target, a.now]);
    return row?.moved ?? 0;
  }

  async purgeDeadLetters(a: { queue: string; cutoff: number; max: number }): Promise<number> {
    const queue = pgName(a.queue);
    const [row] =
      a.max > 0
        ? await this.c.q<{ n: number }>(PURGE_OLDEST, [queue, a.cutoff, a.max])
        : await this.c.q<{ n: number }>(PURGE_ALL, [queue, a.cutoff]);
    return row?.n ?? 0;
  }

  async deadLetterQueues(): Promise<DeadLetterQueue[]> {
    const rows = await this.c.q<{
      name: string;
      dlq_max_age_ms: number;
      dlq_max_count: number;
      dlq_max_bytes: number;
    }>(QUEUES_WITH_DEAD_LETTERS);
    return rows.map((q) => ({
      name: q.name,
      maxAgeMs: q.dlq_max_age_ms,
      maxCount: q.dlq_max_count,
      maxBytes: q.dlq_max_bytes,
    }));
  }

  async dropDeadLettersBefore(a: { queue: string; before: number }): Promise<number> {
    return count(this.c, DELETE_OLDER_THAN, [a.queue, a.before]);
  }

  async nthNewestDeadLetter(a: { queue: string; offset: number }): Promise<number | undefined> {
    const [edge] = await this.c.q<{ id: number }>(NTH_NEWEST, [a.queue, a.offset]);
    return edge?.id;
  }

  async deadLetterBytesEdge(a: { queue: string; bytes: number }): Promise<number | undefined> {
    const [edge] = await this.c.q<{ id: number }>(OVER_BYTES, [a.queue, a.bytes]);
    return edge?.id;
  }

  async dropDeadLettersUpTo(a: { queue: string; id: number }): Promise<number> {
    return count(this.c, DELETE_UP_TO, [a.queue, a.id]);
  }
}

/** Runs a statement that answers `n`, the rows it changed. */
export async function count(c: Conn, sql: string, args: unknown[] = []): Promise<number> {
  const [row] = await c.q<{ n: number }>(sql, args);
  return row?.n ?? 0;
}
