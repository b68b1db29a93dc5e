import type { MetricIncrement, MetricKind, MetricPoint } from "../../contract/job-service.js";
import { bucketOf, type MetricsRange, oldestKeptBucket } from "../../core/metrics-input.js";
import type { Conn } from "./db.js";

/**
 * Per-minute counts of settled jobs (PostgreSQL), as on SQLite: increments add to shared rows. An
 * add is one statement that does not wait for its WAL flush: counts are best effort (a crash of the
 * server may lose its last moments, never a job's state).
 */
export class PgJobMetrics {
  async add(c: Conn, increments: MetricIncrement[], now: number): Promise<void> {
    await c.q(
      `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)),
       added AS (
         INSERT INTO job_metrics (minute, queue, kind, n)
         SELECT $1, q, k, n FROM relaxed, unnest($2::text[], $3::text[], $4::bigint[]) AS u(q, k, n)
         ON CONFLICT (minute, queue, kind) DO UPDATE SET n = job_metrics.n + excluded.n)
       DELETE FROM job_metrics WHERE minute < $5`,
      [
        bucketOf(now),
        increments.map((i) => i.queue),
        increments.map((i) => i.kind),
        increments.map((i) => i.count),
        oldestKeptBucket(now),
      ],
    );
  }

  async read(c: Conn, kind: MetricKind, range: MetricsRange): Promise<MetricPoint[]> {
    if (range.queues !== undefined && range.queues.length === 0) return [];
    const rows = await c.q<{ minute: string | number; count: string | number }>(
      `SELECT minute, sum(n) AS count FROM job_metrics
       WHERE minute BETWEEN $1 AND $2 AND kind = $3 AND ($4::text[] IS NULL OR queue = ANY($4::text[]))
       GROUP BY minute ORDER BY minute`,
      [range.from, range.to, kind, range.queues ?? null],
    );
    return rows.map((r) => ({ minute: Number(r.minute), count: Number(r.count) }));
  }
}
