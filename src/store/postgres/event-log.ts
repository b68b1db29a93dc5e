import type { EventInput, StoredEvent } from "../../contract/job-service.js";
import type { Async } from "../../core/port.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { Conn } from "./db.js";
import { xactLockKey } from "./locks.js";

type EventLogOps = Async<Pick<FlowOps, "appendEvents" | "eventsAfter" | "lastEventId">>;

/**
 * The statements of the event log (PostgreSQL). Appends take one transaction lock, so event ids
 * commit in id order: a reader past id n never finds a smaller id committed later. An append does
 * not wait for its WAL flush: the log is best effort (a crash of the server may lose its last
 * moments, never a job's state).
 */
export class PgEventLogOps implements EventLogOps {
  constructor(
    private readonly c: Conn,
    private readonly schema: string,
  ) {}

  async appendEvents(a: { events: EventInput[]; now: number; keep: number; cutoff: number }): Promise<void> {
    await this.c.q(
      "SELECT set_config('synchronous_commit', 'off', true), pg_advisory_xact_lock($1::bigint)",
      [xactLockKey(this.schema, "event_log").toString()],
    );
    // The count trim and the oldest row left, in the statement that appends.
    const [r] = await this.c.q<{ first_at: string | number | null }>(
      `WITH ins AS (
         INSERT INTO event_log (at, type, data)
         SELECT $1, t, d FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS u(t, d, o) ORDER BY o
         RETURNING id),
       kept AS (SELECT max(id) - $4 AS after FROM ins),
       trimmed AS (DELETE FROM event_log WHERE id <= (SELECT after FROM kept))
       SELECT (SELECT at FROM event_log WHERE id > (SELECT after FROM kept) ORDER BY id LIMIT 1) AS first_at`,
      [a.now, a.events.map((e) => e.type), a.events.map((e) => e.data), a.keep],
    );
    // Ids grow with time: the age trim walks the primary key from the oldest row (no index on `at`).
    if (r?.first_at !== null && r?.first_at !== undefined && Number(r.first_at) < a.cutoff) {
      // At most `keep` rows: a few rounds.
      for (;;) {
        const gone = await this.c.q(
          "DELETE FROM event_log WHERE id IN (SELECT id FROM event_log ORDER BY id LIMIT 1000) AND at < $1 RETURNING 1",
          [a.cutoff],
        );
        if (gone.length < 1000) break;
      }
    }
  }

  async eventsAfter(a: { afterId: number; limit: number }): Promise<StoredEvent[]> {
    const rows = await this.c.q<{ id: string | number; at: string | number; type: string; data: string }>(
      "SELECT id, at, type, data FROM event_log WHERE id > $1 ORDER BY id LIMIT $2",
      [a.afterId, a.limit],
    );
    return rows.map((r) => ({ id: Number(r.id), at: Number(r.at), type: r.type, data: r.data }));
  }

  async lastEventId(): Promise<number> {
    const [r] = await this.c.q<{ id: string | number }>("SELECT coalesce(max(id), 0) AS id FROM event_log");
    return Number(r?.id ?? 0);
  }
}
