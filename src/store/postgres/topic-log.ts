import type {
  EngineDeclaredTopic,
  EngineTopicLogStat,
  TopicLogMessage,
} from "../../contract/topic-service.js";
import {
  FILTERED_READ_BATCH,
  logFilterMessage,
  type TopicMessageRow,
  topicMessage,
} from "../../core/fanout.js";
import type { SubscriptionRow } from "../../core/subscription-rows.js";
import type { MessageFilter } from "../../filter/index.js";
import type { Conn } from "./db.js";

const LIVE = "(expires_at = 0 OR expires_at > $3)";

const READ = `SELECT * FROM topic_messages WHERE topic = $1 AND id > $2 AND ${LIVE} ORDER BY id LIMIT $4`;

const LEASE = `
  SELECT m.*, coalesce(d.attempts, 0) AS attempts FROM topic_messages m
  LEFT JOIN topic_deliveries d ON d.topic = m.topic AND d.subscription = $2 AND d.message_id = m.id
  WHERE m.topic = $1 AND m.id > $3 AND (m.expires_at = 0 OR m.expires_at > $4)
    AND (d.message_id IS NULL OR (d.acked = 0 AND d.lease_expires_at <= $4))
  ORDER BY m.id LIMIT $5
  FOR UPDATE OF m SKIP LOCKED`;

/** The topic log, declared topics and per-message leases on PostgreSQL (see the SQLite `TopicLog`). */
export class PgTopicLog {
  async declare(c: Conn, name: string, retentionMs: number | null, now: number): Promise<void> {
    await c.q(
      `INSERT INTO topics (name, retention_ms, created_at, updated_at) VALUES ($1, $2, $3, $3)
       ON CONFLICT (name) DO UPDATE SET retention_ms = excluded.retention_ms, updated_at = excluded.updated_at`,
      [name, retentionMs, now],
    );
  }

  async isDeclared(c: Conn, name: string): Promise<boolean> {
    return (await c.q("SELECT 1 FROM topics WHERE name = $1", [name])).length > 0;
  }

  async listDeclared(c: Conn): Promise<EngineDeclaredTopic[]> {
    const rows = await c.q<{ name: string; retention_ms: number | null; created_at: number }>(
      'SELECT * FROM topics ORDER BY name COLLATE "C"',
    );
    return rows.map((r) => {
      const d: EngineDeclaredTopic = { name: r.name, createdAt: r.created_at };
      if (r.retention_ms !== null) d.retentionMs = r.retention_ms;
      return d;
    });
  }

  async read(
    c: Conn,
    topic: string,
    cursor: number | null,
    limit: number,
    now: number,
    filter: MessageFilter | undefined,
  ): Promise<TopicLogMessage[]> {
    const after = cursor ?? 0;
    if (!filter || filter.matchesAll) {
      return (await c.q<TopicMessageRow>(READ, [topic, after, now, limit])).map(topicMessage);
    }
    const out: TopicLogMessage[] = [];
    let from = after;
    for (;;) {
      const rows = await c.q<TopicMessageRow>(READ, [topic, from, now, FILTERED_READ_BATCH]);
      for (const r of rows) {
        if (filter.matches(logFilterMessage(r))) out.push(topicMessage(r));
        if (out.length >= limit) return out;
      }
      if (rows.length < FILTERED_READ_BATCH) return out;
      from = rows[rows.length - 1]!.id;
    }
  }

  async lease(
    c: Conn,
    topic: string,
    name: string,
    limit: number,
    visibilityMs: number,
    now: number,
    filter: MessageFilter | undefined,
  ): Promise<TopicLogMessage[]> {
    const out: TopicLogMessage[] = [];
    let after = 0;
    for (;;) {
      const rows = await c.q<TopicMessageRow>(LEASE, [topic, name, after, now, FILTERED_READ_BATCH]);
      for (const r of rows) {
        if (filter && !filter.matchesAll && !filter.matches(logFilterMessage(r))) {
          await c.q(
            `INSERT INTO topic_deliveries (topic, subscription, message_id, acked, attempts, lease_expires_at, delivered_at)
             VALUES ($1, $2, $3, 1, 0, 0, $4) ON CONFLICT DO NOTHING`,
            [topic, name, r.id, now],
          );
          continue;
        }
        await c.q(
          `INSERT INTO topic_deliveries (topic, subscription, message_id, acked, attempts, lease_expires_at, delivered_at)
           VALUES ($1, $2, $3, 0, 1, $4, $5)
           ON CONFLICT (topic, subscription, message_id) DO UPDATE SET attempts = topic_deliveries.attempts + 1,
             lease_expires_at = excluded.lease_expires_at, delivered_at = excluded.delivered_at`,
          [topic, name, r.id, now + visibilityMs, now],
        );
        out.push(topicMessage({ ...r, attempts: Number(r.attempts ?? 0) + 1 }));
        if (out.length >= limit) return out;
      }
      if (rows.length < FILTERED_READ_BATCH) return out;
      after = rows[rows.length - 1]!.id;
    }
  }

  async ackMessage(c: Conn, topic: string, name: string, id: number): Promise<boolean> {
    const rows = await c.q(
      "UPDATE topic_deliveries SET acked = 1 WHERE topic = $1 AND subscription = $2 AND message_id = $3 AND acked = 0 RETURNING 1",
      [topic, name, id],
    );
    return rows.length > 0;
  }

  async nackMessage(c: Conn, topic: string, name: string, id: number): Promise<boolean> {
    const rows = await c.q(
      "UPDATE topic_deliveries SET lease_expires_at = 0 WHERE topic = $1 AND subscription = $2 AND message_id = $3 AND acked = 0 RETURNING 1",
      [topic, name, id],
    );
    return rows.length > 0;
  }

  async dropSubscription(c: Conn, topic: string, name: string): Promise<void> {
    await c.q("DELETE FROM topic_deliveries WHERE topic = $1 AND subscription = $2", [topic, name]);
  }

  async dropTopic(c: Conn, topic: string): Promise<void> {
    await c.q("DELETE FROM topic_messages WHERE topic = $1", [topic]);
    await c.q("DELETE FROM topic_deliveries WHERE topic = $1", [topic]);
  }

  async logStats(c: Conn, subs: SubscriptionRow[], now: number): Promise<EngineTopicLogStat[]> {
    const out: EngineTopicLogStat[] = [];
    for (const s of subs) {
      const [r] = await c.q<{ n: number; oldest: number | null }>(
        `SELECT count(*)::int AS n, min(created_at) AS oldest FROM topic_messages
         WHERE topic = $1 AND id > $2 AND ${LIVE}`,
        [s.topic, s.cursor ?? 0, now],
      );
      const stat: EngineTopicLogStat = { topic: s.topic, subscription: s.name, lag: r?.n ?? 0 };
      if (s.cursor !== null) stat.cursor = Number(s.cursor);
      if (r?.oldest !== null && r?.oldest !== undefined) stat.oldestUnackedAt = Number(r.oldest);
      out.push(stat);
    }
    return out;
  }

  /** One compaction pass of at most `budget` rows (see the SQLite `TopicLog.compact`). */
  async compact(c: Conn, now: number, budget: number): Promise<number> {
    let left = budget;
    const drop = async (rows: { id: number }[]) => {
      if (rows.length > 0) {
        await c.q("DELETE FROM topic_deliveries WHERE message_id = ANY($1::bigint[])", [
          rows.map((r) => r.id),
        ]);
      }
      left -= rows.length;
    };
    await drop(
      await c.q<{ id: number }>(
        `DELETE FROM topic_messages WHERE id IN (
           SELECT id FROM topic_messages WHERE expires_at > 0 AND expires_at <= $1 LIMIT $2)
         RETURNING id`,
        [now, left],
      ),
    );
    const floors = await c.q<{ topic: string; floor: number }>(
      `SELECT topic, min(cursor) AS floor FROM subscriptions WHERE kind = 'log'
       GROUP BY topic HAVING count(*) = count(cursor)`,
    );
    for (const f of floors) {
      if (left <= 0) break;
      await drop(
        await c.q<{ id: number }>(
          `DELETE FROM topic_messages WHERE id IN (
             SELECT id FROM topic_messages WHERE topic = $1 AND id <= $2 ORDER BY id LIMIT $3)
           RETURNING id`,
          [f.topic, f.floor, left],
        ),
      );
    }
    const perMessage = await c.q<{ topic: string; subs: number }>(
      `SELECT s.topic, count(*)::int AS subs FROM subscriptions s WHERE s.kind = 'log'
       GROUP BY s.topic
       HAVING count(*) = sum(CASE WHEN EXISTS (SELECT 1 FROM topic_deliveries d
         WHERE d.topic = s.topic AND d.subscription = s.name) THEN 1 ELSE 0 END)`,
    );
    for (const t of perMessage) {
      if (left <= 0) break;
      await drop(
        await c.q<{ id: number }>(
          `DELETE FROM topic_messages WHERE id IN (
             SELECT m.id FROM topic_messages m WHERE m.topic = $1
               AND (SELECT count(*) FROM topic_deliveries d WHERE d.topic = m.topic AND d.message_id = m.id
                    AND d.acked = 1 AND d.subscription IN (
                      SELECT name FROM subscriptions WHERE topic = m.topic AND kind = 'log')) >= $2
             ORDER BY m.id LIMIT $3)
           RETURNING id`,
          [t.topic, t.subs, left],
        ),
      );
    }
    return budget - left;
  }
}
