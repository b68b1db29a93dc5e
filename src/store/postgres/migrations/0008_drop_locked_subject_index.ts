import type { PgMigration } from "./migration.js";

/**
 * A task's running jobs (its `maxConcurrent` gate) are counted through the lease index, which holds
 * the locked rows alone, as on SQLite: in-flight jobs are few, and a subject index of the locked
 * rows cost every claim an index entry (about 5% of a PostgreSQL job drain) to serve gated claims
 * only.
 */
export const dropLockedSubjectIndex: PgMigration = {
  version: 8,
  name: "drop_locked_subject_index",
  sql: "DROP INDEX idx_msg_locked_subject;",
};
