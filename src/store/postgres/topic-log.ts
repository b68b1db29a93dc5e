import type { Conn } from "./db.js";

/**
 * The topic log's upkeep on PostgreSQL: what unsubscribing drops, and compaction (see the SQLite
 * `TopicLog`); reads, leases and acknowledgements are `PgTopicOps`.
 */
export class PgTopicLog {
  async isDeclared(c: Conn, name: string): Promise<boolean> {
    return (await c.q("SELECT 1 FROM topics WHERE name = $1", [name])).length > 0;
  }

  async dropSubscription(c: Conn, topic: string, name: string): Promise<void> {
    await c.q("DELETE FROM topic_deliveries WHERE topic = $1 AND subscription = $2", [topic, name]);
  }

  async dropTopic(c: Conn, topic: string): Promise<void> {
    await c.q("DELETE FROM topic_messages WHERE topic = $1", [topic]);
    await c.q("DELETE FROM topic_deliveries WHERE topic = $1", [topic]);
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
