import type { PgMigration } from "./migration.js";

/**
 * Flows, message logs and the event log of the job face, as on SQLite: which messages wait on
 * which (one row per child), the lines a handler logs on its message, and the event log that
 * listeners on any node read with a cursor.
 */
export const flowsLogsEvents: PgMigration = {
  version: 5,
  name: "flows_logs_events",
  sql: `
CREATE TABLE message_dependencies (
  child       bigint PRIMARY KEY,
  parent      bigint NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  fail_parent integer NOT NULL DEFAULT 1,
  outcome     text,
  error       text
);
CREATE INDEX idx_dep_parent ON message_dependencies (parent, child);
CREATE INDEX idx_dep_open ON message_dependencies (child) WHERE outcome IS NULL;

CREATE TABLE message_logs (
  seq  bigint NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  n    bigint NOT NULL,
  at   bigint NOT NULL,
  text text NOT NULL,
  PRIMARY KEY (seq, n)
);

-- Appends hold a transaction lock, so ids commit in order and a reader's cursor never skips one.
CREATE TABLE event_log (
  id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at   bigint NOT NULL,
  type text NOT NULL,
  data text NOT NULL
);
`,
};
