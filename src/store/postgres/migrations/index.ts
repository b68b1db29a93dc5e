import { initial } from "./0001_initial.js";
import { jobs } from "./0002_jobs.js";
import { jobTopics } from "./0003_job_topics.js";
import { queueCounts } from "./0004_queue_counts.js";
import { flowsLogsEvents } from "./0005_flows_logs_events.js";
import { metricsDebounce } from "./0006_metrics_debounce.js";
import { liveExpireIndex } from "./0007_live_expire_index.js";
import { dropLockedSubjectIndex } from "./0008_drop_locked_subject_index.js";
import type { PgMigration } from "./migration.js";

/** Every migration of the PostgreSQL schema, in order. */
export const pgMigrations: readonly PgMigration[] = [
  initial,
  jobs,
  jobTopics,
  queueCounts,
  flowsLogsEvents,
  metricsDebounce,
  liveExpireIndex,
  dropLockedSubjectIndex,
];

export const PG_SCHEMA_VERSION = pgMigrations[pgMigrations.length - 1]!.version;
