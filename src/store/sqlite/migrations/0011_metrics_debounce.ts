import type { Migration } from "./migration.js";

/**
 * Job metrics and debounce windows. `job_metrics` counts settled jobs per minute, queue and kind
 * (completed, failed), kept 7 days; processes sharing the file add to the same rows.
 * `debounce_windows` names, per queue and key, the scheduled message a debounced send moves instead
 * of storing another, and when its window opened; a window's row goes with its message.
 */
export const metricsDebounce: Migration = {
  version: 11,
  name: "metrics_debounce",
  sql: `
CREATE TABLE job_metrics (
  minute INTEGER NOT NULL,
  queue  TEXT NOT NULL,
  kind   TEXT NOT NULL,
  n      INTEGER NOT NULL,
  PRIMARY KEY (minute, queue, kind)
) STRICT;

CREATE TABLE debounce_windows (
  queue     TEXT NOT NULL,
  key       TEXT NOT NULL,
  seq       INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  opened_at INTEGER NOT NULL,
  PRIMARY KEY (queue, key)
) STRICT;
-- A message's delete finds its window row by this index (the foreign key's cascade).
CREATE INDEX idx_debounce_seq ON debounce_windows (seq);
`,
};
