import type { Migration } from "./migration.js";

/**
 * Flows, message logs and the event log of the job face: which messages wait on which (one row per
 * child: a child has one parent), the lines a handler logs on its message, and the store-wide
 * event log that listeners in other processes read with a cursor.
 */
export const flowsLogsEvents: Migration = {
  version: 10,
  name: "flows_logs_events",
  sql: `
CREATE TABLE message_dependencies (
  child       INTEGER PRIMARY KEY,
  -- A parent's dependencies (and, below, a message's log lines) go with it, like its errors.
  parent      INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  fail_parent INTEGER NOT NULL DEFAULT 1,
  -- NULL while open; then 'completed', 'failed' or 'cancelled'.
  outcome     TEXT,
  error       TEXT
) STRICT;
CREATE INDEX idx_dep_parent ON message_dependencies (parent, child);
CREATE INDEX idx_dep_open ON message_dependencies (child) WHERE outcome IS NULL;

CREATE TABLE message_logs (
  seq  INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  n    INTEGER NOT NULL,
  at   INTEGER NOT NULL,
  text TEXT NOT NULL,
  PRIMARY KEY (seq, n)
) STRICT, WITHOUT ROWID;

-- AUTOINCREMENT: an id is never handed out twice, even once every older event was trimmed, so a
-- listener's cursor stays meaningful.
CREATE TABLE event_log (
  id   INTEGER PRIMARY KEY AUTOINCREMENT,
  at   INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL
) STRICT;
`,
};
