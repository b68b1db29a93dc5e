import type { Statement } from "better-sqlite3";
import type { SqliteDatabase } from "./database.js";

/**
 * Adds inserted messages to the per-queue counts (`queue_counts`, which `Stats` reads), in the
 * inserting transaction. Moves and deletes are counted by triggers; inserts are counted here, one
 * upsert per queue and state of a statement instead of a trigger's upsert per row. An insert is
 * never a backing-off message (those were delivered before): no `backing_off` row to count.
 */
export class QueueCounter {
  private readonly add: Statement;

  constructor(db: SqliteDatabase) {
    this.add = db.prepare(`
      INSERT INTO queue_counts (queue, state, n) VALUES (?, ?, ?)
      ON CONFLICT (queue, state) DO UPDATE SET n = n + excluded.n`);
  }

  /** Counts `n` messages inserted into `queue` in `state`. */
  inserted(queue: string, state: string, n: number): void {
    if (n > 0) this.add.run(queue, state, n);
  }
}
