import type { HeartbeatResult, WorkerInfo, WorkerRecord } from "../../contract/job-service.js";
import type { SqliteDatabase } from "./database.js";

interface WorkerRow {
  id: string;
  info: string;
  started_at: number;
  last_heartbeat: number;
}

function record(row: WorkerRow): WorkerRecord {
  return {
    ...(JSON.parse(row.info) as WorkerInfo),
    startedAt: row.started_at,
    lastHeartbeat: row.last_heartbeat,
  };
}

/**
 * Worker heartbeats. Reaping happens inside a heartbeat's own transaction and deletes the rows it
 * reports, so each dead worker is reported to exactly one live one.
 */
export class Workers {
  private readonly exists;
  private readonly upsert;
  private readonly reap;
  private readonly all;
  private readonly remove;

  constructor(db: SqliteDatabase) {
    this.exists = db.prepare("SELECT 1 FROM workers WHERE id = ?");
    this.upsert = db.prepare(`
      INSERT INTO workers (id, info, started_at, last_heartbeat) VALUES (@id, @info, @now, @now)
      ON CONFLICT (id) DO UPDATE SET info = excluded.info, last_heartbeat = excluded.last_heartbeat`);
    this.reap = db.prepare("DELETE FROM workers WHERE last_heartbeat < ? AND id <> ? RETURNING *");
    this.all = db.prepare("SELECT * FROM workers ORDER BY id");
    this.remove = db.prepare("DELETE FROM workers WHERE id = ?");
  }

  heartbeat(info: WorkerInfo, staleAfterMs: number, now: number): HeartbeatResult {
    const registered = this.exists.get(info.workerId) === undefined;
    this.upsert.run({ id: info.workerId, info: JSON.stringify(info), now });
    const reaped = (this.reap.all(now - staleAfterMs, info.workerId) as WorkerRow[]).map(record);
    return { registered, reaped };
  }

  list(): WorkerRecord[] {
    return (this.all.all() as WorkerRow[]).map(record);
  }

  delete(id: string): boolean {
    return this.remove.run(id).changes > 0;
  }
}
