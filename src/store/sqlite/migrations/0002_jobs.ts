import type { Migration } from "./migration.js";

/**
 * What the job face needs of the engine, as generic features of messages and queues: per-message
 * delivery limit and lease, unique keys over live rows, kept outcomes (`completed`, `cancelled`)
 * with a result and a retention time, an error history per delivery, progress, cancel requests,
 * queue pause, worker heartbeats, named leases and token buckets.
 */
export const jobs: Migration = {
  version: 2,
  name: "jobs",
  sql: `
ALTER TABLE messages ADD COLUMN max_deliveries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN lock_duration_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN unique_key TEXT;
ALTER TABLE messages ADD COLUMN result BLOB;
ALTER TABLE messages ADD COLUMN delivered_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN settled_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN progress INTEGER;
ALTER TABLE messages ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN redrive_count INTEGER NOT NULL DEFAULT 0;

ALTER TABLE queues ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;

-- A unique key is held only while its message is live; settling it frees the key.
CREATE UNIQUE INDEX idx_msg_unique_key ON messages (queue, unique_key)
  WHERE unique_key IS NOT NULL AND state IN ('active', 'locked', 'deferred', 'scheduled');

-- The error of every failed delivery; goes with its message.
CREATE TABLE message_errors (
  id         INTEGER PRIMARY KEY,
  seq_number INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  attempt    INTEGER NOT NULL,
  error      TEXT NOT NULL,
  failed_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX idx_msg_errors_seq ON message_errors (seq_number, id);

-- Worker heartbeats (the job face's workers; any consumer may register).
CREATE TABLE workers (
  id             TEXT PRIMARY KEY,
  info           TEXT NOT NULL,
  started_at     INTEGER NOT NULL,
  last_heartbeat INTEGER NOT NULL
) STRICT;

-- Named leases: leader election, once-per-tick firing.
CREATE TABLE locks (
  name       TEXT PRIMARY KEY,
  owner      TEXT NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX idx_locks_expire ON locks (expires_at);

-- Token buckets of claim gates, keyed by subject.
CREATE TABLE rate_limits (
  key        TEXT PRIMARY KEY,
  tokens     REAL NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
`,
};
