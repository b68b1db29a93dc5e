import type { MessageLogEntry } from "../../contract/job-service.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { SqliteDatabase } from "./database.js";

/** The statements of the lines a lock holder logs on its message (SQLite). */
export class SqliteMessageLogOps
  implements Pick<FlowOps, "holdsLease" | "appendLog" | "logLines" | "logCount">
{
  private readonly held;
  private readonly last;
  private readonly insert;
  private readonly trim;
  private readonly count;
  private readonly page;

  constructor(db: SqliteDatabase) {
    this.held = db.prepare(
      "SELECT 1 FROM messages WHERE id = ? AND queue = ? AND state = 'locked' AND lock_token = ?",
    );
    this.last = db.prepare("SELECT ifnull(max(n), 0) AS n FROM message_logs WHERE seq = ?");
    this.insert = db.prepare("INSERT INTO message_logs (seq, n, at, text) VALUES (?, ?, ?, ?)");
    this.trim = db.prepare("DELETE FROM message_logs WHERE seq = ? AND n <= ?");
    this.count = db.prepare("SELECT count(*) AS n FROM message_logs WHERE seq = ?");
    this.page = db.prepare("SELECT n, at, text FROM message_logs WHERE seq = ? ORDER BY n LIMIT ? OFFSET ?");
  }

  holdsLease(a: { queue: string; seq: number; token: string }): boolean {
    return this.held.get(a.seq, a.queue, a.token) !== undefined;
  }

  appendLog(a: { seq: number; now: number; lines: string[]; keep: number }): number {
    let n = (this.last.get(a.seq) as { n: number }).n;
    for (const text of a.lines) this.insert.run(a.seq, ++n, a.now, text);
    this.trim.run(a.seq, n - a.keep);
    return this.logCount(a);
  }

  logLines(a: { seq: number; offset: number; limit: number }): MessageLogEntry[] {
    const rows = this.page.all(a.seq, a.limit, a.offset) as { n: number; at: number; text: string }[];
    return rows.map((r) => ({ index: r.n, at: r.at, text: r.text }));
  }

  logCount(a: { seq: number }): number {
    return (this.count.get(a.seq) as { n: number }).n;
  }
}
