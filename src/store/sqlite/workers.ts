import type { WorkerOps, WorkerRow } from "../../core/verbs/workers.js";
import type { SqliteDatabase } from "./database.js";

/** Worker heartbeats' statements on SQLite (the rules are in core/verbs/workers.ts). */
export class SqliteWorkerOps implements WorkerOps {
  private readonly exists;
  private readonly upsertRow;
  private readonly reapRows;
  private readonly all;
  private readonly deleteRow;

  constructor(db: SqliteDatabase) {
    this.exists = db.prepare("SELECT 1 FROM workers WHERE id = ?");
    this.upsertRow = db.prepare(`
      INSERT INTO workers (id, info, started_at, last_heartbeat) VALUES (@id, @info, @now, @now)
      ON CONFLICT (id) DO UPDATE SET info = excluded.info, last_heartbeat = excluded.last_heartbeat`);
    this.reapRows = db.prepare("DELETE FROM workers WHERE last_heartbeat < ? AND id <> ? RETURNING *");
    this.all = db.prepare("SELECT * FROM workers ORDER BY id");
    this.deleteRow = db.prepare("DELETE FROM workers WHERE id = ?");
  }

  upsert(a: { id: string; info: string; now: number }): boolean {
    const inserted = this.exists.get(a.id) === undefined;
    this.upsertRow.run(a);
    return inserted;
  }

  reap(a: { before: number; except: string }): WorkerRow[] {
    return this.reapRows.all(a.before, a.except) as WorkerRow[];
  }

  list(): WorkerRow[] {
    return this.all.all() as WorkerRow[];
  }

  delete(id: string): boolean {
    return this.deleteRow.run(id).changes > 0;
  }
}
