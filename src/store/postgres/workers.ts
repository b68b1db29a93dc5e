import type { Async } from "../../core/port.js";
import type { WorkerOps, WorkerRow } from "../../core/verbs/workers.js";
import type { Conn } from "./db.js";
import { pgName } from "./names.js";

/** Worker heartbeats' statements on PostgreSQL, on one connection (the rules are in core/verbs/workers.ts). */
export class PgWorkerOps implements Async<WorkerOps> {
  constructor(private readonly c: Conn) {}

  async upsert(a: { id: string; info: string; now: number }): Promise<boolean> {
    const [up] = await this.c.q<{ inserted: boolean }>(
      `INSERT INTO workers (id, info, started_at, last_heartbeat) VALUES ($1, $2, $3, $3)
       ON CONFLICT (id) DO UPDATE SET info = excluded.info, last_heartbeat = excluded.last_heartbeat
       RETURNING (xmax = 0) AS inserted`,
      [a.id, a.info, a.now],
    );
    return up?.inserted === true;
  }

  reap(a: { before: number; except: string }): Promise<WorkerRow[]> {
    return this.c.q<WorkerRow>("DELETE FROM workers WHERE last_heartbeat < $1 AND id <> $2 RETURNING *", [
      a.before,
      a.except,
    ]);
  }

  list(): Promise<WorkerRow[]> {
    return this.c.q<WorkerRow>('SELECT * FROM workers ORDER BY id COLLATE "C"');
  }

  async delete(id: string): Promise<boolean> {
    return (await this.c.q("DELETE FROM workers WHERE id = $1 RETURNING 1", [pgName(id)])).length > 0;
  }
}
