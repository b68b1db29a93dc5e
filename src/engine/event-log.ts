import type { EventInput, EventPage } from "../contract/job-service.js";
import { EVENT_LOG_RETENTION_MS, MAX_EVENT_LOG_EVENTS } from "../contract/limits.js";
import type { SqliteDatabase } from "../store/database.js";

/**
 * The store-wide event log (SQLite): appended to by producers and workers of any process, read
 * with a cursor. Each append trims it to the latest `MAX_EVENT_LOG_EVENTS` events, none older
 * than `EVENT_LOG_RETENTION_MS`.
 */
export class EventLog {
  private readonly insert;
  private readonly trimCount;
  private readonly trimAge;
  private readonly after;
  private readonly lastId;

  constructor(db: SqliteDatabase) {
    this.insert = db.prepare("INSERT INTO event_log (at, type, data) VALUES (?, ?, ?)");
    this.trimCount = db.prepare("DELETE FROM event_log WHERE id <= ?");
    this.trimAge = db.prepare("DELETE FROM event_log WHERE at < ?");
    this.after = db.prepare("SELECT id, at, type, data FROM event_log WHERE id > ? ORDER BY id LIMIT ?");
    this.lastId = db.prepare("SELECT ifnull(max(id), 0) AS id FROM event_log");
  }

  append(events: EventInput[], now: number): void {
    let id = 0;
    for (const e of events) id = Number(this.insert.run(now, e.type, e.data).lastInsertRowid);
    if (id === 0) return;
    this.trimCount.run(id - MAX_EVENT_LOG_EVENTS);
    this.trimAge.run(now - EVENT_LOG_RETENTION_MS);
  }

  read(afterId: number, limit: number): EventPage {
    const events = limit > 0 ? (this.after.all(afterId, limit) as EventPage["events"]) : [];
    return { events, lastId: (this.lastId.get() as { id: number }).id };
  }
}
