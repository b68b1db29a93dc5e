import type { MetricIncrement, MetricKind, MetricPoint } from "../../contract/job-service.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { SqliteDatabase } from "./database.js";

/**
 * The statements of the per-minute counts of settled jobs (SQLite), one row per (minute, queue,
 * kind). Increments add to the row, so every process sharing the file counts into the same
 * buckets. The prune is a seek on the primary key's first column.
 */
export class SqliteJobMetricsOps implements Pick<FlowOps, "addMetrics" | "readMetrics"> {
  private readonly upsert;
  private readonly prune;
  private readonly all;
  private readonly inQueues = new Map<number, ReturnType<SqliteDatabase["prepare"]>>();

  constructor(private readonly db: SqliteDatabase) {
    this.upsert = db.prepare(
      `INSERT INTO job_metrics (minute, queue, kind, n) VALUES (?, ?, ?, ?)
       ON CONFLICT (minute, queue, kind) DO UPDATE SET n = n + excluded.n`,
    );
    this.prune = db.prepare("DELETE FROM job_metrics WHERE minute < ?");
    this.all = db.prepare(
      `SELECT minute, sum(n) AS count FROM job_metrics
       WHERE minute BETWEEN ? AND ? AND kind = ? GROUP BY minute ORDER BY minute`,
    );
  }

  addMetrics(a: { minute: number; increments: MetricIncrement[]; oldest: number; inWrite?: boolean }): void {
    for (const i of a.increments) this.upsert.run(a.minute, i.queue, i.kind, i.count);
    this.prune.run(a.oldest);
  }

  readMetrics(a: { kind: MetricKind; from: number; to: number; queues?: string[] }): MetricPoint[] {
    if (a.queues === undefined) return this.all.all(a.from, a.to, a.kind) as MetricPoint[];
    return this.inQueuesOf(a.queues.length).all([a.from, a.to, a.kind, ...a.queues]) as MetricPoint[];
  }

  private inQueuesOf(n: number) {
    let stmt = this.inQueues.get(n);
    if (!stmt) {
      const marks = Array.from({ length: n }, () => "?").join(", ");
      stmt = this.db.prepare(
        `SELECT minute, sum(n) AS count FROM job_metrics
         WHERE minute BETWEEN ? AND ? AND kind = ? AND queue IN (${marks}) GROUP BY minute ORDER BY minute`,
      );
      if (this.inQueues.size < 64) this.inQueues.set(n, stmt);
    }
    return stmt;
  }
}
