import type { PgMigration } from "./migration.js";

/** Job metrics (per minute, queue and kind, kept 7 days) and debounce windows, as on SQLite. */
export const metricsDebounce: PgMigration = {
  version: 6,
  name: "metrics_debounce",
  sql: `
CREATE TABLE job_metrics (
  minute bigint NOT NULL,
  queue  text NOT NULL,
  kind   text NOT NULL,
  n      bigint NOT NULL,
  PRIMARY KEY (minute, queue, kind)
);

CREATE TABLE debounce_windows (
  queue     text NOT NULL,
  key       text NOT NULL,
  seq       bigint NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  opened_at bigint NOT NULL,
  PRIMARY KEY (queue, key)
);
CREATE INDEX idx_debounce_seq ON debounce_windows (seq);
`,
};
