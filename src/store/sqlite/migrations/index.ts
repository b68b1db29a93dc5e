import { initial } from "./0001_initial.js";
import { jobs } from "./0002_jobs.js";
import { jobTopics } from "./0003_job_topics.js";
import { stateCheck } from "./0004_state_check.js";
import { priorityClaimIndex } from "./0005_priority_claim_index.js";
import { sequenceReservations } from "./0006_sequence_reservations.js";
import { topicLogReservations } from "./0007_topic_log_reservations.js";
import { rowidTailedIndexes } from "./0008_rowid_tailed_indexes.js";
import { queueCounts } from "./0009_queue_counts.js";
import { flowsLogsEvents } from "./0010_flows_logs_events.js";
import { metricsDebounce } from "./0011_metrics_debounce.js";
import { countedInserts } from "./0012_counted_inserts.js";
import { countedClaims } from "./0013_counted_claims.js";
import type { Migration } from "./migration.js";

export type { Migration } from "./migration.js";

/** Every migration, in order. The last one's version is the schema version this build writes. */
export const migrations: readonly Migration[] = [
  initial,
  jobs,
  jobTopics,
  stateCheck,
  priorityClaimIndex,
  sequenceReservations,
  topicLogReservations,
  rowidTailedIndexes,
  queueCounts,
  flowsLogsEvents,
  metricsDebounce,
  countedInserts,
  countedClaims,
];

export const LATEST_SCHEMA_VERSION = migrations[migrations.length - 1]!.version;
