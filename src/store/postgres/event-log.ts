import type { EventInput, EventPage } from "../../contract/job-service.js";
import { EVENT_LOG_RETENTION_MS, MAX_EVENT_LOG_EVENTS } from "../../contract/limits.js";
import type { Conn } from "./db.js";
import { xactLockKey } from "./locks.js";

/**
 * The event log (PostgreSQL), as on SQLite. Appends take one transaction lock, so event ids
 * commit in id order: a reader past id n never finds a smaller id committed later. An append does
 * not wait for its WAL flush: the log is best effort (a crash of the server may lose its last
 * moments, never a job's state).
 */
export class PgEventLog {
  async append(c: Conn, schema: string, events: EventInput[], now: number): Promise<void> {
    await c.q("SELECT set_config('synchronous_commit', 'off', true), pg_advisory_xact_lock($1::bigint)", [
      xactLockKey(schema, "event_log").toString(),
    ]);
    // The count trim and the oldest row left, in the statement that appends.
    const [r] = await c.q<{ first_at: string | number | null }>(
      `WITH ins AS (
         INSERT INTO event_log (at, type, data)
         SELECT $1, t, d FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS u(t, d, o) ORDER BY o
         RETURNING id),
       kept AS (SELECT max(id) - $4 AS after FROM ins),
       trimmed AS (DELETE FROM event_log WHERE id <= (SELECT after FROM kept))
       SELECT (SELECT at FROM event_log WHERE id > (SELECT after FROM kept) ORDER BY id LIMIT 1) AS first_at`,
      [now, events.map((e) => e.type), events.map((e) => e.data), MAX_EVENT_LOG_EVENTS],
    );
    // Ids grow with time: the age trim walks the primary key from the oldest row (no index on \`at\`).
    const cutoff = now - EVENT_LOG_RETENTION_MS;
    if (r?.first_at !== null && r?.first_at !== undefined && Number(r.first_at) < cutoff) {
      // At most MAX_EVENT_LOG_EVENTS rows: a few rounds.
      for (;;) {
        const gone = await c.q(
          "DELETE FROM event_log WHERE id IN (SELECT id FROM event_log ORDER BY id LIMIT 1000) AND at < $1 RETURNING 1",
          [cutoff],
        );
        if (gone.length < 1000) break;
      }
    }
  }

  async read(c: Conn, afterId: number, limit: number): Promise<EventPage> {
    const rows =
      limit > 0
        ? await c.q<{ id: string | number; at: string | number; type: string; data: string }>(
            "SELECT id, at, type, data FROM event_log WHERE id > $1 ORDER BY id LIMIT $2",
            [afterId, limit],
          )
        : [];
    const [last] = await c.q<{ id: string | number }>("SELECT coalesce(max(id), 0) AS id FROM event_log");
    return {
      events: rows.map((r) => ({ id: Number(r.id), at: Number(r.at), type: r.type, data: r.data })),
      lastId: Number(last?.id ?? 0),
    };
  }
}
