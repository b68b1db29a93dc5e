import type { Statement } from "better-sqlite3";
import type { SqliteDatabase } from "./database.js";

/**
 * Keeps the per-queue counts (`queue_counts`, which `Stats` reads) in the transaction that changes
 * them. Inserts and claims are counted here, once per queue and state a call touches, instead of a
 * trigger's upserts per row; other moves and deletes are counted by triggers. An insert is never a
 * backing-off message (those were delivered before), nor is a claim: no `backing_off` row to count.
 */
export class QueueCounter {
  private readonly add: Statement;
  private readonly take: Statement;

  constructor(db: SqliteDatabase) {
    this.add = db.prepare(`
      INSERT INTO queue_counts (queue, state, n) VALUES (?, ?, ?)
      ON CONFLICT (queue, state) DO UPDATE SET n = n + excluded.n`);
    // The row is there: the messages being moved out of the state were counted into it.
    this.take = db.prepare("UPDATE queue_counts SET n = n - ? WHERE queue = ? AND state = ?");
  }

  /** Counts `n` messages inserted into `queue` in `state`. */
  inserted(queue: string, state: string, n: number): void {
    if (n > 0) this.add.run(queue, state, n);
  }

  /** Counts `n` messages of `queue` moved from state `from` to `to` (claims; see migration 13). */
  moved(queue: string, from: string, to: string, n: number): void {
    if (n <= 0) return;
    this.take.run(n, queue, from);
    this.add.run(queue, to, n);
  }
}
