import { LockLostError } from "../../contract/errors.js";
import type { MessageLogPage } from "../../contract/job-service.js";
import { MAX_MESSAGE_LOG_LINES } from "../../contract/limits.js";
import type { Conn } from "./db.js";

/** The lines a lock holder logs on its message (PostgreSQL), as on SQLite. */
export class PgMessageLogs {
  async append(
    c: Conn,
    queue: string,
    seq: number,
    token: string,
    lines: string[],
    now: number,
  ): Promise<number> {
    if (!token) throw new LockLostError();
    const held = await c.q(
      "SELECT 1 FROM messages WHERE id = $1 AND queue = $2 AND state = 'locked' AND lock_token = $3 FOR UPDATE",
      [seq, queue, token],
    );
    if (held.length === 0) throw new LockLostError();
    const [last] = await c.q<{ n: string | number }>(
      "SELECT coalesce(max(n), 0) AS n FROM message_logs WHERE seq = $1",
      [seq],
    );
    const first = Number(last?.n ?? 0) + 1;
    if (lines.length > 0) {
      await c.q(
        `INSERT INTO message_logs (seq, n, at, text)
         SELECT $1, $2::bigint + o - 1, $3, t FROM unnest($4::text[]) WITH ORDINALITY AS u(t, o)`,
        [seq, first, now, lines],
      );
    }
    await c.q("DELETE FROM message_logs WHERE seq = $1 AND n <= $2", [
      seq,
      first + lines.length - 1 - MAX_MESSAGE_LOG_LINES,
    ]);
    const [count] = await c.q<{ n: number }>("SELECT count(*)::int AS n FROM message_logs WHERE seq = $1", [
      seq,
    ]);
    return count?.n ?? 0;
  }

  async read(c: Conn, seq: number, offset: number, limit: number): Promise<MessageLogPage> {
    const rows = await c.q<{ n: string | number; at: string | number; text: string }>(
      "SELECT n, at, text FROM message_logs WHERE seq = $1 ORDER BY n LIMIT $2 OFFSET $3",
      [seq, limit, offset],
    );
    const [count] = await c.q<{ n: number }>("SELECT count(*)::int AS n FROM message_logs WHERE seq = $1", [
      seq,
    ]);
    return {
      entries: rows.map((r) => ({ index: Number(r.n), at: Number(r.at), text: r.text })),
      total: count?.n ?? 0,
    };
  }
}
