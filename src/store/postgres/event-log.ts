import type { EventInput, StoredEvent } from "../../contract/job-service.js";
import type { Async } from "../../core/port.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { Conn } from "./db.js";
import { xactLockKey } from "./locks.js";

type EventLogOps = Async<Pick<FlowOps, "appendEvents" | "eventsAfter" | "lastEventId">>;

/**
 * One append in one statement (no BEGIN/COMMIT round trips): the transaction lock is taken before
 * any id is drawn (the insert's rows join the lock's row), so event ids commit in id order. The
 * same statement trims to the newest `$4` and drops the rows older than `$5`: ids grow with time,
 * so those are the ids before the oldest row at or after `$5`, found walking the primary key from
 * the oldest row (no index on `at`; usually one row is read).
 */
const APPEND = `
  WITH locked AS MATERIALIZED (
    SELECT set_config('synchronous_commit', 'off', true), pg_advisory_xact_lock($6::bigint)),
  ins AS (
    INSERT INTO event_log (at, type, data)
    SELECT $1, t, d FROM locked, unnest($2::text[], $3::text[]) WITH ORDINALITY AS u(t, d, o) ORDER BY o
    RETURNING id),
  trimmed AS (
    DELETE FROM event_log WHERE id < greatest(
      (SELECT max(id) - $4 + 1 FROM ins),
      coalesce((SELECT id FROM event_log WHERE at >= $5 ORDER BY id LIMIT 1), (SELECT min(id) FROM ins))))
  SELECT count(*)::int AS n FROM ins`;

/**
 * The statements of the event log (PostgreSQL). An append does not wait for its WAL flush: the log
 * is best effort (a crash of the server may lose its last moments, never a job's state).
 */
export class PgEventLogOps implements EventLogOps {
  constructor(
    private readonly c: Conn,
    private readonly schema: string,
  ) {}

  async appendEvents(a: { events: EventInput[]; now: number; keep: number; cutoff: number }): Promise<void> {
    await this.c.q(APPEND, [
      a.now,
      a.events.map((e) => e.type),
      a.events.map((e) => e.data),
      a.keep,
      a.cutoff,
      xactLockKey(this.schema, "event_log").toString(),
    ]);
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
