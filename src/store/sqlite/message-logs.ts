import { LockLostError } from "../../contract/errors.js";
import type { MessageLogPage } from "../../contract/job-service.js";
import { MAX_MESSAGE_LOG_LINES } from "../../contract/limits.js";
import type { SqliteDatabase } from "./database.js";

/** The lines a lock holder logs on its message (SQLite), capped to the latest `MAX_MESSAGE_LOG_LINES`. */
export class MessageLogs {
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

  append(queue: string, seq: number, token: string, lines: string[], now: number): number {
    if (!token || !this.held.get(seq, queue, token)) throw new LockLostError();
    let n = (this.last.get(seq) as { n: number }).n;
    for (const text of lines) this.insert.run(seq, ++n, now, text);
    this.trim.run(seq, n - MAX_MESSAGE_LOG_LINES);
    return (this.count.get(seq) as { n: number }).n;
  }

  read(seq: number, offset: number, limit: number): MessageLogPage {
    const rows = this.page.all(seq, limit, offset) as { n: number; at: number; text: string }[];
    return {
      entries: rows.map((r) => ({ index: r.n, at: r.at, text: r.text })),
      total: (this.count.get(seq) as { n: number }).n,
    };
  }
}
