import { createHash } from "node:crypto";
import type { PreparedMessage } from "../../core/outgoing.js";
import type { Async } from "../../core/port.js";
import type { QueueRow } from "../../core/queue-config.js";
import type { FreshRows, Route, SendOps } from "../../core/verbs/send.js";
import type { HandOff } from "../../core/verbs/send-hand-off.js";
import type { DedupHit, DedupKey, NewRow } from "../../core/verbs/send-rows.js";
import { claimable, groupRule } from "./claim.js";
import type { Conn } from "./db.js";
import { lockAll, xactLockKey } from "./locks.js";
import { pgName } from "./names.js";
import type { PgQueueRegistry, PgQueueRow } from "./queue-registry.js";
import type { PgSubscriptions } from "./subscriptions.js";

/** What the send statements share across connections: the schema and the per-node caches. */
export interface PgSendContext {
  schema: string;
  queues: PgQueueRegistry;
  subscriptions: PgSubscriptions;
}

const INSERT_LOG = `
  INSERT INTO topic_messages (topic, created_at, expires_at, message_id, correlation_id, content_type, subject,
    properties, body)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`;

const COLUMNS =
  "queue, state, priority, visible_at, enqueued_at, expires_at, message_id, correlation_id, reply_to, group_id, content_type, subject, properties, body, max_deliveries, lock_duration_ms, unique_key";

const INSERT_ONE = `
  INSERT INTO messages (${COLUMNS}, topic, subscription)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
  RETURNING id`;

/** Many rows (of one or several queues) in one statement; ids follow the array order. */
const INSERT_MANY = `
  INSERT INTO messages (${COLUMNS}, topic, subscription)
  SELECT u.queue, u.state, u.priority, u.visible_at, $1, u.expires_at, u.message_id, u.correlation_id, u.reply_to,
         u.group_id, u.content_type, u.subject, u.properties, u.body, u.max_deliveries, u.lock_duration_ms, NULL,
         u.topic, u.subscription
  FROM unnest($2::text[], $3::text[], $4::int[], $5::bigint[], $6::bigint[], $7::text[], $8::text[], $9::text[],
              $10::text[], $11::text[], $12::text[], $13::text[], $14::bytea[], $15::int[], $16::bigint[], $17::text[],
              $18::text[])
       WITH ORDINALITY AS u(queue, state, priority, visible_at, expires_at, message_id, correlation_id, reply_to,
                            group_id, content_type, subject, properties, body, max_deliveries, lock_duration_ms, topic,
                            subscription, ord)
  ORDER BY u.ord
  RETURNING id`;

/**
 * The whole send to a plain queue as one statement, guarded by the cached queue row's config version
 * (`$17`): when it is no longer current nothing is inserted and `fresh` is 0.
 */
const SEND_GUARDED = `
  WITH g AS (SELECT 1 FROM queues WHERE name = $1 AND version = $17),
  ins AS (
    INSERT INTO messages (${COLUMNS})
    SELECT $1, u.state, u.priority, u.visible_at, $2, u.expires_at, u.message_id, u.correlation_id, u.reply_to,
           u.group_id, u.content_type, u.subject, u.properties, u.body, u.max_deliveries, u.lock_duration_ms, NULL
    FROM unnest($3::text[], $4::int[], $5::bigint[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[],
                $11::text[], $12::text[], $13::text[], $14::bytea[], $15::int[], $16::bigint[])
         WITH ORDINALITY AS u(state, priority, visible_at, expires_at, message_id, correlation_id, reply_to, group_id,
                              content_type, subject, properties, body, max_deliveries, lock_duration_ms, ord)
    WHERE EXISTS (SELECT 1 FROM g)
    ORDER BY u.ord
    RETURNING id)
  SELECT (SELECT count(*) FROM g)::int AS fresh, ARRAY(SELECT id FROM ins ORDER BY id) AS ids`;

/**
 * `SEND_GUARDED` handing rows to a parked receiver: the rows with a token (`$18`) are stored locked
 * until `$19`, delivered once, if no claimable row of the queue has priority `$20` or more (it would
 * be claimed first; one its group holds back would not); else every row is stored as `SEND_GUARDED`
 * stores it. `handed` says which.
 */
const SEND_HANDING = `
  WITH g AS (SELECT 1 FROM queues WHERE name = $1 AND version = $17),
  h AS (SELECT NOT EXISTS (SELECT 1 FROM messages m WHERE ${claimable} AND m.priority >= $20 AND ${groupRule}) AS ok),
  ins AS (
    INSERT INTO messages (${COLUMNS}, lock_token, locked_until, delivery_count, delivered_at)
    SELECT $1, CASE WHEN l.hand THEN 'locked' ELSE u.state END, u.priority, u.visible_at, $2, u.expires_at,
           u.message_id, u.correlation_id, u.reply_to, u.group_id, u.content_type, u.subject, u.properties, u.body,
           u.max_deliveries, u.lock_duration_ms, NULL, CASE WHEN l.hand THEN u.token END,
           CASE WHEN l.hand THEN u.locked_until ELSE 0 END, CASE WHEN l.hand THEN 1 ELSE 0 END,
           CASE WHEN l.hand THEN $2 ELSE 0 END
    FROM unnest($3::text[], $4::int[], $5::bigint[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[],
                $11::text[], $12::text[], $13::text[], $14::bytea[], $15::int[], $16::bigint[], $18::text[],
                $19::bigint[])
         WITH ORDINALITY AS u(state, priority, visible_at, expires_at, message_id, correlation_id, reply_to, group_id,
                              content_type, subject, properties, body, max_deliveries, lock_duration_ms, token,
                              locked_until, ord)
         CROSS JOIN LATERAL (SELECT h.ok AND u.token IS NOT NULL AS hand FROM h) AS l
    WHERE EXISTS (SELECT 1 FROM g)
    ORDER BY u.ord
    RETURNING id)
  SELECT (SELECT count(*) FROM g)::int AS fresh, (SELECT ok FROM h) AS handed,
         ARRAY(SELECT id FROM ins ORDER BY id) AS ids`;

const FIND_DEDUP =
  "SELECT request_hash, seq_number FROM dedup WHERE queue = $1 AND key = $2 AND seen_at > $3";

const FIND_LIVE = `
  SELECT id FROM messages
  WHERE queue = $1 AND unique_key = $2 AND state IN ('active', 'locked', 'deferred', 'scheduled')`;

/** One message into a dedup queue, and its dedup row, in one statement. */
const INSERT_DEDUPED = `
  WITH ins AS (${INSERT_ONE})
  INSERT INTO dedup (queue, key, request_hash, seq_number, seen_at)
  SELECT $1, $20, $21, ins.id, $5 FROM ins
  ON CONFLICT (queue, key) DO UPDATE SET request_hash = excluded.request_hash,
    seq_number = excluded.seq_number, seen_at = excluded.seen_at
  RETURNING seq_number AS id`;

const CANCEL =
  "DELETE FROM messages WHERE id = $1 AND queue = $2 AND state = 'scheduled' AND delivery_count = 0 RETURNING 1";

function sha256(data: string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A dedup key as stored: a very long one as its hash (index rows are bounded). */
function storedKey(key: string): string {
  return key.length > 512 ? `sha256:${sha256(key)}` : key;
}

/**
 * The send statements on one PostgreSQL connection. Names are looked up with `pgName`; concurrent
 * senders on other nodes are ordered with transaction advisory locks (`serialize`).
 */
export class PgSendOps implements Async<SendOps> {
  constructor(
    private readonly c: Conn,
    private readonly x: PgSendContext,
  ) {}

  async route(name: string): Promise<Route> {
    const n = pgName(name);
    const targets = await this.x.subscriptions.targets(this.c, n);
    const queue = targets ? undefined : await this.x.queues.get(this.c, n);
    if (queue) return { queue };
    const [declared] = await this.c.q<{ retention_ms: number | null }>(
      "SELECT retention_ms FROM topics WHERE name = $1",
      [n],
    );
    return { targets, declared };
  }

  queueRows(names: string[]): Promise<Map<string, QueueRow>> {
    return this.x.queues.getMany(this.c, names.map(pgName));
  }

  async createQueue(name: string, now: number): Promise<QueueRow> {
    await this.x.queues.upsert(this.c, name, undefined, now);
    return this.x.queues.require(this.c, name);
  }

  /** Takes, in one sorted round, the locks of the queues' order, groups, unique and dedup keys. */
  serialize(rows: readonly NewRow[], dedup: readonly (DedupKey | undefined)[]): Promise<void> {
    const s = this.x.schema;
    const keys: bigint[] = [];
    rows.forEach((r, i) => {
      const q = r.queue.name;
      const m = r.m;
      if (r.queue.ordering_mode === "strict_fifo") keys.push(xactLockKey(s, "queue", q));
      else if (m.groupId !== null) keys.push(xactLockKey(s, "group", q, m.groupId));
      if (m.uniqueKey !== null) keys.push(xactLockKey(s, "unique", q, m.uniqueKey));
      const d = dedup[i];
      if (d) keys.push(xactLockKey(s, "dedup", q, storedKey(d.key)));
    });
    return lockAll(this.c, keys);
  }

  async findLive(queue: string, uniqueKey: string): Promise<number | undefined> {
    const [live] = await this.c.q<{ id: number }>(FIND_LIVE, [queue, uniqueKey]);
    return live?.id;
  }

  async findDedup(queue: string, key: string, since: number): Promise<DedupHit | undefined> {
    const [seen] = await this.c.q<{ request_hash: string; seq_number: number }>(FIND_DEDUP, [
      queue,
      storedKey(key),
      since,
    ]);
    return seen && { hash: seen.request_hash, seq: seen.seq_number };
  }

  async insert(row: NewRow, dedup?: DedupKey): Promise<number> {
    const [ins] = dedup
      ? await this.c.q<{ id: number }>(INSERT_DEDUPED, [...oneRow(row), storedKey(dedup.key), dedup.hash])
      : await this.c.q<{ id: number }>(INSERT_ONE, oneRow(row));
    return ins!.id;
  }

  async insertMany(rows: readonly NewRow[]): Promise<number[]> {
    const ids = await this.c.q<{ id: number }>(INSERT_MANY, [
      rows[0]!.enqueuedAt,
      rows.map((r) => r.queue.name),
      ...columns(rows),
      rows.map((r) => r.origin?.topic ?? null),
      rows.map((r) => r.origin?.subscription ?? null),
    ]);
    return ids.map((x) => x.id).sort((a, b) => a - b);
  }

  async insertFresh(queue: QueueRow, rows: readonly NewRow[], h?: HandOff): Promise<FreshRows | undefined> {
    const values = [queue.name, rows[0]!.enqueuedAt, ...columns(rows), (queue as PgQueueRow).version];
    if (h) {
      values.push(
        h.locks.map((l) => l?.token ?? null),
        h.locks.map((l) => l?.lockedUntil ?? null),
        h.floor,
      );
    }
    const [row] = await this.c.q<{ fresh: number; handed?: boolean; ids: number[] }>(
      h ? SEND_HANDING : SEND_GUARDED,
      values,
    );
    if (!row || row.fresh === 0) return undefined;
    return { ids: row.ids.map(Number), handed: row.handed === true };
  }

  async appendLog(topic: string, m: PreparedMessage, now: number, expiresAt: number): Promise<number> {
    const [row] = await this.c.q<{ id: number }>(INSERT_LOG, [
      pgName(topic),
      now,
      expiresAt,
      m.messageId,
      m.correlationId,
      m.contentType,
      m.subject,
      m.propertiesJson,
      m.body,
    ]);
    return row!.id;
  }

  async cancel(queue: string, seq: number): Promise<boolean> {
    return (await this.c.q(CANCEL, [seq, pgName(queue)])).length > 0;
  }

  /** Two sends of one key never both open a window. */
  lockWindow(queue: string, key: string): Promise<void> {
    return lockAll(this.c, [xactLockKey(this.x.schema, "debounce", pgName(queue), key)]);
  }

  async openWindow(queue: string, key: string): Promise<{ seq: number; openedAt: number } | undefined> {
    const [w] = await this.c.q<{ seq: string | number; opened_at: string | number }>(
      `SELECT w.seq, w.opened_at FROM debounce_windows w JOIN messages m ON m.id = w.seq
       WHERE w.queue = $1 AND w.key = $2 AND m.state = 'scheduled' AND m.delivery_count = 0
       FOR UPDATE OF m`,
      [pgName(queue), key],
    );
    return w && { seq: Number(w.seq), openedAt: Number(w.opened_at) };
  }

  async moveWindow(seq: number, at: number, body: Buffer | undefined): Promise<void> {
    if (body) await this.c.q("UPDATE messages SET visible_at = $1, body = $2 WHERE id = $3", [at, body, seq]);
    else await this.c.q("UPDATE messages SET visible_at = $1 WHERE id = $2", [at, seq]);
  }

  async openedWindow(queue: string, key: string, seq: number, now: number): Promise<void> {
    await this.c.q(
      `INSERT INTO debounce_windows (queue, key, seq, opened_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (queue, key) DO UPDATE SET seq = excluded.seq, opened_at = excluded.opened_at`,
      [pgName(queue), key, seq, now],
    );
  }
}

/** The per-row arrays of a multi-row insert, from `state` to `lock_duration_ms`. */
function columns(rows: readonly NewRow[]): unknown[] {
  return [
    rows.map((r) => r.state),
    rows.map((r) => r.priority),
    rows.map((r) => r.visibleAt),
    rows.map((r) => r.expiresAt),
    rows.map((r) => r.m.messageId),
    rows.map((r) => r.m.correlationId),
    rows.map((r) => r.m.replyTo),
    rows.map((r) => r.m.groupId),
    rows.map((r) => r.m.contentType),
    rows.map((r) => r.m.subject),
    rows.map((r) => r.m.propertiesJson),
    rows.map((r) => r.m.body),
    rows.map((r) => r.m.maxDeliveries),
    rows.map((r) => r.m.lockDurationMs),
  ];
}

function oneRow(r: NewRow): unknown[] {
  const m = r.m;
  return [
    r.queue.name,
    r.state,
    r.priority,
    r.visibleAt,
    r.enqueuedAt,
    r.expiresAt,
    m.messageId,
    m.correlationId,
    m.replyTo,
    m.groupId,
    m.contentType,
    m.subject,
    m.propertiesJson,
    m.body,
    m.maxDeliveries,
    m.lockDurationMs,
    m.uniqueKey,
    r.origin?.topic ?? null,
    r.origin?.subscription ?? null,
  ];
}
