import type { DebounceOptions } from "../../contract/job-service.js";
import { debounceDeadline } from "../../core/metrics-input.js";
import type { Conn } from "./db.js";

/**
 * Debounce windows (PostgreSQL), as on SQLite. The caller holds the window's transaction lock, so
 * two sends of one key never both open a window.
 */
export class PgDebounceWindows {
  /** Moves the open window's message (and its body, if asked); undefined when no window is open. */
  async slide(
    c: Conn,
    queue: string,
    d: Required<DebounceOptions>,
    body: Buffer,
    now: number,
  ): Promise<{ seq: number; at: number } | undefined> {
    const [w] = await c.q<{ seq: string | number; opened_at: string | number }>(
      `SELECT w.seq, w.opened_at FROM debounce_windows w JOIN messages m ON m.id = w.seq
       WHERE w.queue = $1 AND w.key = $2 AND m.state = 'scheduled' AND m.delivery_count = 0
       FOR UPDATE OF m`,
      [queue, d.key],
    );
    if (!w) return undefined;
    const seq = Number(w.seq);
    const at = debounceDeadline(Number(w.opened_at), now, d);
    if (d.replaceBody)
      await c.q("UPDATE messages SET visible_at = $1, body = $2 WHERE id = $3", [at, body, seq]);
    else await c.q("UPDATE messages SET visible_at = $1 WHERE id = $2", [at, seq]);
    return { seq, at };
  }

  /** Opens (or reopens) the window of `key` on the message `seq`. */
  async opened(c: Conn, queue: string, key: string, seq: number, now: number): Promise<void> {
    await c.q(
      `INSERT INTO debounce_windows (queue, key, seq, opened_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (queue, key) DO UPDATE SET seq = excluded.seq, opened_at = excluded.opened_at`,
      [queue, key, seq, now],
    );
  }
}
