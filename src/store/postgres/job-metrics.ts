import type { MetricIncrement, MetricKind, MetricPoint } from "../../contract/job-service.js";
import type { Async } from "../../core/port.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { Conn } from "./db.js";

type JobMetricsOps = Async<Pick<FlowOps, "addMetrics" | "readMetrics">>;

/**
 * The statements of the per-minute counts of settled jobs (PostgreSQL): increments add to shared
 * rows. An add is one statement that does not wait for its WAL flush: counts are best effort (a
 * crash of the server may lose its last moments, never a job's state).
 */
export class PgJobMetricsOps implements JobMetricsOps {
  constructor(private readonly c: Conn) {}

  async addMetrics(a: {
    minute: number;
    increments: MetricIncrement[];
    oldest: number;
    inWrite?: boolean;
  }): Promise<void> {
    // Inside another verb's transaction the commit stays as durable as that verb's.
    const relaxed = a.inWrite ? "SELECT 1" : "SELECT set_config('synchronous_commit', 'off', true)";
    await this.c.q(
      `WITH relaxed AS (${relaxed}),
       added AS (
         INSERT INTO job_metrics (minute, queue, kind, n)
         SELECT $1, q, k, n FROM relaxed, unnest($2::text[], $3::text[], $4::bigint[]) AS u(q, k, n)
         ON CONFLICT (minute, queue, kind) DO UPDATE SET n = job_metrics.n + excluded.n)
       DELETE FROM job_metrics WHERE minute < $5`,
      [
        a.minute,
        a.increments.map((i) => i.queue),
        a.increments.map((i) => i.kind),
        a.increments.map((i) => i.count),
        a.oldest,
      ],
    );
  }

  async readMetrics(a: {
    kind: MetricKind;
    from: number;
    to: number;
    queues?: string[];
  }): Promise<MetricPoint[]> {
    const rows = await this.c.q<{ minute: string | number; count: string | number }>(
      `SELECT minute, sum(n) AS count FROM job_metrics
       WHERE minute BETWEEN $1 AND $2 AND kind = $3 AND ($4::text[] IS NULL OR queue = ANY($4::text[]))
       GROUP BY minute ORDER BY minute`,
      [a.from, a.to, a.kind, a.queues ?? null],
    );
    return rows.map((r) => ({ minute: Number(r.minute), count: Number(r.count) }));
  }
}
