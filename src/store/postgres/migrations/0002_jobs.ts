import type { PgMigration } from "./migration.js";

/**
 * What the job face needs of the engine, as on SQLite: per-message delivery limit and lease,
 * unique keys over live rows, kept outcomes (`completed`, `cancelled`) with a result and a retention
 * time, an error history per delivery, progress, cancel requests, queue pause, worker heartbeats,
 * named leases and token buckets.
 */
export const jobs: PgMigration = {
  version: 2,
  name: "jobs",
  sql: `
ALTER TABLE messages ADD COLUMN max_deliveries integer NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN lock_duration_ms bigint NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN unique_key text;
ALTER TABLE messages ADD COLUMN result bytea;
ALTER TABLE messages ADD COLUMN delivered_at bigint NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN settled_at bigint NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN progress integer;
ALTER TABLE messages ADD COLUMN cancel_requested integer NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN redrive_count integer NOT NULL DEFAULT 0;

ALTER TABLE queues ADD COLUMN paused integer NOT NULL DEFAULT 0;

-- A unique key is held only while its message is live; settling it frees the key.
CREATE UNIQUE INDEX idx_msg_unique_key ON messages (queue, unique_key)
  WHERE unique_key IS NOT NULL AND state IN ('active', 'locked', 'deferred', 'scheduled');
-- Claim gates count the locked messages of a subject.
CREATE INDEX idx_msg_locked_subject ON messages (subject) WHERE state = 'locked';
-- Kept outcomes whose retention lapsed.
CREATE INDEX idx_msg_retained ON messages (expires_at) WHERE state IN ('completed', 'cancelled');

-- The error of every failed delivery; goes with its message.
CREATE TABLE message_errors (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  seq_number bigint NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  attempt    integer NOT NULL,
  error      text NOT NULL,
  failed_at  bigint NOT NULL
);
CREATE INDEX idx_msg_errors_seq ON message_errors (seq_number, id);

-- Worker heartbeats.
CREATE TABLE workers (
  id             text PRIMARY KEY,
  info           text NOT NULL,
  started_at     bigint NOT NULL,
  last_heartbeat bigint NOT NULL
);

-- Named leases: leader election, once-per-tick firing.
CREATE TABLE locks (
  name       text PRIMARY KEY,
  owner      text NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX idx_locks_expire ON locks (expires_at);

-- Token buckets of claim gates, keyed by subject.
CREATE TABLE rate_limits (
  key        text PRIMARY KEY,
  tokens     double precision NOT NULL,
  updated_at bigint NOT NULL
);
`,
};
