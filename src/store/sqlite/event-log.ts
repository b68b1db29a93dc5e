import type { EventInput, StoredEvent } from "../../contract/job-service.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { SqliteDatabase } from "./database.js";

/** Rows per multi-row INSERT of an append. */
const ROWS_PER_INSERT = 64;

/**
 * The statements of the store-wide event log (SQLite), appended to by producers and workers of any
 * process. Both trims walk the primary key from the oldest row (ids grow with time), so the log
 * needs no index of its own. Appends take turns on the file's one writer.
 */
export class SqliteEventLogOps implements Pick<FlowOps, "appendEvents" | "eventsAfter" | "lastEventId"> {
  private readonly db: SqliteDatabase;
  private readonly inserts = new Map<number, ReturnType<SqliteDatabase["prepare"]>>();
  private readonly trimCount;
  private readonly oldest;
  private readonly trimAge;
  private readonly after;
  private readonly lastId;

  constructor(db: SqliteDatabase) {
    this.db = db;
    this.trimCount = db.prepare("DELETE FROM event_log WHERE id <= ?");
    this.oldest = db.prepare("SELECT at FROM event_log ORDER BY id LIMIT 1");
    this.trimAge = db.prepare(
      "DELETE FROM event_log WHERE id IN (SELECT id FROM event_log ORDER BY id LIMIT 1000) AND at < ?",
    );
    this.after = db.prepare("SELECT id, at, type, data FROM event_log WHERE id > ? ORDER BY id LIMIT ?");
    this.lastId = db.prepare("SELECT ifnull(max(id), 0) AS id FROM event_log");
  }

  appendEvents(a: { events: EventInput[]; now: number; keep: number; cutoff: number }): void {
    let id = 0;
    for (let from = 0; from < a.events.length; from += ROWS_PER_INSERT) {
      const chunk = a.events.slice(from, from + ROWS_PER_INSERT);
      const values: unknown[] = [];
      for (const e of chunk) values.push(a.now, e.type, e.data);
      id = Number(this.insertOf(chunk.length).run(values).lastInsertRowid);
    }
    if (id === 0) return;
    this.trimCount.run(id - a.keep);
    const first = this.oldest.get() as { at: number } | undefined;
    if (first && first.at < a.cutoff) {
      // At most `keep` rows: a few rounds.
      while (this.trimAge.run(a.cutoff).changes === 1000);
    }
  }

  eventsAfter(a: { afterId: number; limit: number }): StoredEvent[] {
    return this.after.all(a.afterId, a.limit) as StoredEvent[];
  }

  lastEventId(): number {
    return (this.lastId.get() as { id: number }).id;
  }

  private insertOf(rows: number) {
    let stmt = this.inserts.get(rows);
    if (!stmt) {
      const tuples = Array.from({ length: rows }, () => "(?, ?, ?)").join(", ");
      stmt = this.db.prepare(`INSERT INTO event_log (at, type, data) VALUES ${tuples}`);
      this.inserts.set(rows, stmt);
    }
    return stmt;
  }
}
