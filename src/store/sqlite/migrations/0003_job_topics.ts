import type { Migration } from "./migration.js";

/**
 * Job topics: the `task` and `log` kinds of the one subscription table get their columns (target
 * task and queue, ownership, delivery settings, log cursor); the topic log stores one row per
 * publish of a topic with log subscribers or a declared one; per-message leases of log
 * subscriptions; deliveries of task subscriptions carry their topic and subscription (indexed, for
 * backlog stats).
 */
export const jobTopics: Migration = {
  version: 3,
  name: "job_topics",
  sql: `
ALTER TABLE subscriptions ADD COLUMN task TEXT;
ALTER TABLE subscriptions ADD COLUMN target_queue TEXT;
ALTER TABLE subscriptions ADD COLUMN durable INTEGER NOT NULL DEFAULT 1;
ALTER TABLE subscriptions ADD COLUMN owner TEXT;
ALTER TABLE subscriptions ADD COLUMN priority INTEGER;
ALTER TABLE subscriptions ADD COLUMN max_deliveries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE subscriptions ADD COLUMN lock_duration_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE subscriptions ADD COLUMN cursor INTEGER;
-- The reaper: ephemeral rows.
CREATE INDEX idx_subs_ephemeral ON subscriptions (owner) WHERE durable = 0;

ALTER TABLE messages ADD COLUMN topic TEXT;
ALTER TABLE messages ADD COLUMN subscription TEXT;
-- Backlog of task subscriptions (only their deliveries have a topic; no state, so claims and
-- settlements never touch it).
CREATE INDEX idx_msg_topic ON messages (topic, subscription) WHERE topic IS NOT NULL;

-- Declared topics: their publishes are kept even without a log subscription.
CREATE TABLE topics (
  name         TEXT PRIMARY KEY,
  retention_ms INTEGER,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
) STRICT;

-- The topic log: one row per publish, read through the log subscriptions' cursors.
CREATE TABLE topic_messages (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  topic          TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  expires_at     INTEGER NOT NULL DEFAULT 0,
  message_id     TEXT,
  correlation_id TEXT,
  content_type   TEXT,
  subject        TEXT,
  properties     TEXT,
  body           BLOB NOT NULL
) STRICT;
CREATE INDEX idx_topic_msg ON topic_messages (topic, id);
CREATE INDEX idx_topic_msg_expire ON topic_messages (expires_at) WHERE expires_at > 0;

-- Per-message leases of log subscriptions.
CREATE TABLE topic_deliveries (
  topic            TEXT NOT NULL,
  subscription     TEXT NOT NULL,
  message_id       INTEGER NOT NULL,
  acked            INTEGER NOT NULL DEFAULT 0,
  attempts         INTEGER NOT NULL DEFAULT 0,
  lease_expires_at INTEGER NOT NULL DEFAULT 0,
  delivered_at     INTEGER NOT NULL,
  PRIMARY KEY (topic, subscription, message_id)
) STRICT;
CREATE INDEX idx_topic_deliv_msg ON topic_deliveries (message_id);
`,
};
