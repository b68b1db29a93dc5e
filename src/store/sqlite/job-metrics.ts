import type { MetricIncrement, MetricKind, MetricPoint } from "../../contract/job-service.js";
import { bucketOf, type MetricsRange, oldestKeptBucket } from "../../core/metrics-input.js";
import type { SqliteDatabase } from "./database.js";

/**
 * Per-minute counts of settled jobs (SQLite), one row per (minute, queue, kind). Increments add to
 * the row, so every process sharing the file counts into the same buckets. Each add drops the
 * buckets older than `METRICS_RETENTION_MS` (a seek on the primary key's first column).
 */
export class JobMetrics {
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

  add(increments: MetricIncrement[], now: number): void {
    const minute = bucketOf(now);
    for (const i of increments) this.upsert.run(minute, i.queue, i.kind, i.count);
    this.prune.run(oldestKeptBucket(now));
  }

  read(kind: MetricKind, range: MetricsRange): MetricPoint[] {
    if (range.queues === undefined) return this.all.all(range.from, range.to, kind) as MetricPoint[];
    if (range.queues.length === 0) return [];
    return this.inQueuesOf(range.queues.length).all([
      range.from,
      range.to,
      kind,
      ...range.queues,
    ]) as MetricPoint[];
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
