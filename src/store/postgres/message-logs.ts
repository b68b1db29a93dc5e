import type { MessageLogEntry } from "../../contract/job-service.js";
import type { Async } from "../../core/port.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { Conn } from "./db.js";
import { pgName } from "./names.js";

type MessageLogOps = Async<Pick<FlowOps, "holdsLease" | "appendLog" | "logLines" | "logCount">>;

/** The statements of the lines a lock holder logs on its message (PostgreSQL). */
export class PgMessageLogOps implements MessageLogOps {
  constructor(private readonly c: Conn) {}

  /** Locks the message's row: the append that follows reads the last line number committed before it. */
  async holdsLease(a: { queue: string; seq: number; token: string }): Promise<boolean> {
    const held = await this.c.q(
      "SELECT 1 FROM messages WHERE id = $1 AND queue = $2 AND state = 'locked' AND lock_token = $3 FOR UPDATE",
      [a.seq, pgName(a.queue), a.token],
    );
    return held.length > 0;
  }

  /**
   * One statement: its trim and count see the log as it was before the insert, which the trim
   * never reaches (`lines.length ≤ keep`), so the count adds the inserted rows.
   */
  async appendLog(a: { seq: number; now: number; lines: string[]; keep: number }): Promise<number> {
    const [r] = await this.c.q<{ n: number }>(
      `WITH last AS (SELECT coalesce(max(n), 0) AS n FROM message_logs WHERE seq = $1::bigint),
       ins AS (
         INSERT INTO message_logs (seq, n, at, text)
         SELECT $1::bigint, last.n + u.o, $2::bigint, u.t FROM last, unnest($3::text[]) WITH ORDINALITY AS u(t, o)
         RETURNING 1),
       del AS (
         DELETE FROM message_logs
         WHERE seq = $1::bigint AND n <= (SELECT n FROM last) + cardinality($3::text[]) - $4::bigint
         RETURNING 1)
       SELECT ((SELECT count(*) FROM message_logs WHERE seq = $1::bigint)
         + (SELECT count(*) FROM ins) - (SELECT count(*) FROM del))::int AS n`,
      [a.seq, a.now, a.lines, a.keep],
    );
    return r?.n ?? 0;
  }

  async logLines(a: { seq: number; offset: number; limit: number }): Promise<MessageLogEntry[]> {
    const rows = await this.c.q<{ n: string | number; at: string | number; text: string }>(
      "SELECT n, at, text FROM message_logs WHERE seq = $1 ORDER BY n LIMIT $2 OFFSET $3",
      [a.seq, a.limit, a.offset],
    );
    return rows.map((r) => ({ index: Number(r.n), at: Number(r.at), text: r.text }));
  }

  async logCount(a: { seq: number }): Promise<number> {
    const [r] = await this.c.q<{ n: number }>("SELECT count(*)::int AS n FROM message_logs WHERE seq = $1", [
      a.seq,
    ]);
    return r?.n ?? 0;
  }
}
