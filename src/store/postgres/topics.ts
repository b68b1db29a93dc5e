import type { TopicMessageRow } from "../../core/fanout.js";
import type { Async } from "../../core/port.js";
import type {
  DeclaredRow,
  LeaseGrant,
  LogLag,
  LogRead,
  LogRef,
  LogSubscription,
  TopicOps,
} from "../../core/verbs/topics.js";
import type { Conn } from "./db.js";
import { lockAll, xactLockKey } from "./locks.js";
import { pgName } from "./names.js";
import type { PgSubscriptions } from "./subscriptions.js";

const LIVE = "(m.expires_at = 0 OR m.expires_at > $3)";

const COLUMNS =
  "id, topic, created_at, expires_at, message_id, correlation_id, content_type, subject, properties, body";

/** Declares unless a queue has the name (the caller holds the namespace lock). */
const DECLARE = `
  INSERT INTO topics (name, retention_ms, created_at, updated_at)
  SELECT $1::text, $2::bigint, $3::bigint, $3::bigint WHERE NOT EXISTS (SELECT 1 FROM queues WHERE name = $1)
  ON CONFLICT (name) DO UPDATE SET retention_ms = excluded.retention_ms, updated_at = excluded.updated_at
  RETURNING 1`;

const DECLARED =
  'SELECT name, retention_ms AS "retentionMs", created_at AS "createdAt" FROM topics ORDER BY name COLLATE "C"';

const READ = `SELECT ${COLUMNS} FROM topic_messages m WHERE m.topic = $1 AND m.id > $2 AND ${LIVE}
  ORDER BY m.id LIMIT $4`;

/** `READ` ending with the row whose bytes (body and properties, as `rowBytes` counts) reach `$5`. */
const READ_WITHIN = `
  WITH r AS (${READ}),
  b AS (SELECT r.*, sum(octet_length(r.body) + coalesce(char_length(r.properties), 0)) OVER (ORDER BY r.id)
          - (octet_length(r.body) + coalesce(char_length(r.properties), 0)) AS before FROM r)
  SELECT ${COLUMNS} FROM b WHERE b.before < $5 ORDER BY b.id`;

// Locked, so that concurrent leases of one subscription never hand out one message twice.
const LEASABLE = `
  SELECT m.*, coalesce(d.attempts, 0) AS attempts FROM topic_messages m
  LEFT JOIN topic_deliveries d ON d.topic = m.topic AND d.subscription = $2 AND d.message_id = m.id
  WHERE m.topic = $1 AND m.id > $4 AND ${LIVE}
    AND (d.message_id IS NULL OR (d.acked = 0 AND d.lease_expires_at <= $3))
  ORDER BY m.id LIMIT $5
  FOR UPDATE OF m SKIP LOCKED`;

const LEASE = `
  WITH skipped AS (
    INSERT INTO topic_deliveries (topic, subscription, message_id, acked, attempts, lease_expires_at, delivered_at)
    SELECT $1::text, $2::text, id, 1, 0, 0, $3::bigint FROM unnest($6::bigint[]) AS id
    ON CONFLICT DO NOTHING)
  INSERT INTO topic_deliveries (topic, subscription, message_id, acked, attempts, lease_expires_at, delivered_at)
  SELECT $1::text, $2::text, id, 0, 1, $4::bigint, $3::bigint FROM unnest($5::bigint[]) AS id
  ON CONFLICT (topic, subscription, message_id) DO UPDATE SET attempts = topic_deliveries.attempts + 1,
    lease_expires_at = excluded.lease_expires_at, delivered_at = excluded.delivered_at`;

const MOVE_CURSOR = `
  UPDATE subscriptions SET cursor = $3 WHERE topic = $1 AND name = $2 AND kind = 'log'
    AND (cursor IS NULL OR cursor < $3) RETURNING 1`;

const ACK =
  "UPDATE topic_deliveries SET acked = 1 WHERE topic = $1 AND subscription = $2 AND message_id = $3 AND acked = 0 RETURNING 1";

const NACK =
  "UPDATE topic_deliveries SET lease_expires_at = 0 WHERE topic = $1 AND subscription = $2 AND message_id = $3 AND acked = 0 RETURNING 1";

const LAGS = `
  SELECT s.topic, s.name AS subscription, s.cursor, l.lag, l.oldest
  FROM subscriptions s, LATERAL (
    SELECT count(*)::int AS lag, min(m.created_at) AS oldest FROM topic_messages m
    WHERE m.topic = s.topic AND m.id > coalesce(s.cursor, 0) AND (m.expires_at = 0 OR m.expires_at > $2)) l
  WHERE s.kind = 'log' AND ($1::text IS NULL OR s.topic = $1)
  ORDER BY s.topic COLLATE "C", s.name COLLATE "C"`;

/** The topics statements on PostgreSQL (the rules are in core/verbs/topics.ts), on one connection. */
export class PgTopicOps implements Async<TopicOps> {
  constructor(
    private readonly c: Conn,
    private readonly schema: string,
    private readonly subscriptions: PgSubscriptions,
  ) {}

  async declare(a: { name: string; retentionMs: number | null; now: number }): Promise<boolean> {
    await lockAll(this.c, [xactLockKey(this.schema, "namespace")]);
    return (await this.c.q(DECLARE, [pgName(a.name), a.retentionMs, a.now])).length > 0;
  }

  declared(): Promise<DeclaredRow[]> {
    return this.c.q<DeclaredRow>(DECLARED);
  }

  async logSubscription(a: { topic: string; name: string }): Promise<LogSubscription | undefined> {
    const row = await this.subscriptions.row(this.c, pgName(a.topic), pgName(a.name));
    if (row?.kind !== "log") return undefined;
    return {
      cursor: row.cursor === null ? null : Number(row.cursor),
      filter: this.subscriptions.filterFor(row),
    };
  }

  rows(a: LogRead & { maxBytes?: number }): Promise<TopicMessageRow[]> {
    const args = [pgName(a.topic), a.after, a.now, a.limit];
    return a.maxBytes === undefined
      ? this.c.q<TopicMessageRow>(READ, args)
      : this.c.q<TopicMessageRow>(READ_WITHIN, [...args, a.maxBytes]);
  }

  leasable(a: LogRead & { name: string }): Promise<TopicMessageRow[]> {
    return this.c.q<TopicMessageRow>(LEASABLE, [pgName(a.topic), pgName(a.name), a.now, a.after, a.limit]);
  }

  async lease(a: LeaseGrant): Promise<void> {
    await this.c.q(LEASE, [pgName(a.topic), pgName(a.name), a.now, a.until, a.leased, a.skipped]);
  }

  async moveCursor(a: LogRef): Promise<boolean> {
    return (await this.c.q(MOVE_CURSOR, [pgName(a.topic), pgName(a.name), a.id])).length > 0;
  }

  async ack(a: LogRef): Promise<boolean> {
    return (await this.c.q(ACK, [pgName(a.topic), pgName(a.name), a.id])).length > 0;
  }

  async nack(a: LogRef): Promise<boolean> {
    return (await this.c.q(NACK, [pgName(a.topic), pgName(a.name), a.id])).length > 0;
  }

  lags(a: { topic: string | undefined; now: number }): Promise<LogLag[]> {
    return this.c.q<LogLag>(LAGS, [a.topic === undefined ? null : pgName(a.topic), a.now]);
  }
}
