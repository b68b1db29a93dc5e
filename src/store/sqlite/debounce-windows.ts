import type { DebounceOptions } from "../../contract/job-service.js";
import { debounceDeadline } from "../../core/metrics-input.js";
import type { SqliteDatabase } from "./database.js";

/**
 * Debounce windows (SQLite): a (queue, key) names the message its window collapses sends into, and
 * when the window opened. A window is open while that message is scheduled and was never
 * delivered; its row goes with the message (foreign key).
 */
export class DebounceWindows {
  private readonly find;
  private readonly move;
  private readonly moveWithBody;
  private readonly open;

  constructor(db: SqliteDatabase) {
    this.find = db.prepare(
      `SELECT w.seq AS seq, w.opened_at AS openedAt FROM debounce_windows w JOIN messages m ON m.id = w.seq
       WHERE w.queue = ? AND w.key = ? AND m.state = 'scheduled' AND m.delivery_count = 0`,
    );
    this.move = db.prepare("UPDATE messages SET visible_at = ? WHERE id = ?");
    this.moveWithBody = db.prepare("UPDATE messages SET visible_at = ?, body = ? WHERE id = ?");
    this.open = db.prepare(
      `INSERT INTO debounce_windows (queue, key, seq, opened_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (queue, key) DO UPDATE SET seq = excluded.seq, opened_at = excluded.opened_at`,
    );
  }

  /** Moves the open window's message (and its body, if asked); undefined when no window is open. */
  slide(
    queue: string,
    d: Required<DebounceOptions>,
    body: Buffer,
    now: number,
  ): { seq: number; at: number } | undefined {
    const w = this.find.get(queue, d.key) as { seq: number; openedAt: number } | undefined;
    if (!w) return undefined;
    const at = debounceDeadline(w.openedAt, now, d);
    if (d.replaceBody) this.moveWithBody.run(at, body, w.seq);
    else this.move.run(at, w.seq);
    return { seq: w.seq, at };
  }

  /** Opens (or reopens) the window of `key` on the message `seq`. */
  opened(queue: string, key: string, seq: number, now: number): void {
    this.open.run(queue, key, seq, now);
  }
}
