import type { PgMigration } from "./migration.js";

/**
 * Job topics, as on SQLite: the `task` and `log` kinds of the one subscription table get their
 * columns, the topic log, declared topics, per-message leases, and the topic and subscription of
 * task deliveries (indexed, for backlog stats).
 */
export const jobTopics: PgMigration = {
  version: 3,
  name: "job_topics",
  sql: `
ALTER TABLE subscriptions ADD COLUMN task text;
ALTER TABLE subscriptions ADD COLUMN target_queue text;
ALTER TABLE subscriptions ADD COLUMN durable integer NOT NULL DEFAULT 1;
ALTER TABLE subscriptions ADD COLUMN owner text;
ALTER TABLE subscriptions ADD COLUMN priority integer;
ALTER TABLE subscriptions ADD COLUMN max_deliveries integer NOT NULL DEFAULT 0;
ALTER TABLE subscriptions ADD COLUMN lock_duration_ms bigint NOT NULL DEFAULT 0;
ALTER TABLE subscriptions ADD COLUMN cursor bigint;
CREATE INDEX idx_subs_ephemeral ON subscriptions (owner) WHERE durable = 0;

ALTER TABLE messages ADD COLUMN topic text;
ALTER TABLE messages ADD COLUMN subscription text;
CREATE INDEX idx_msg_topic ON messages (topic, subscription, state) WHERE topic IS NOT NULL;

CREATE TABLE topics (
  name         text PRIMARY KEY,
  retention_ms bigint,
  created_at   bigint NOT NULL,
  updated_at   bigint NOT NULL
);

CREATE TABLE topic_messages (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  topic          text NOT NULL,
  created_at     bigint NOT NULL,
  expires_at     bigint NOT NULL DEFAULT 0,
  message_id     text,
  correlation_id text,
  content_type   text,
  subject        text,
  properties     text,
  body           bytea NOT NULL
);
CREATE INDEX idx_topic_msg ON topic_messages (topic, id);
CREATE INDEX idx_topic_msg_expire ON topic_messages (expires_at) WHERE expires_at > 0;

CREATE TABLE topic_deliveries (
  topic            text NOT NULL,
  subscription     text NOT NULL,
  message_id       bigint NOT NULL,
  acked            integer NOT NULL DEFAULT 0,
  attempts         integer NOT NULL DEFAULT 0,
  lease_expires_at bigint NOT NULL DEFAULT 0,
  delivered_at     bigint NOT NULL,
  PRIMARY KEY (topic, subscription, message_id)
);
CREATE INDEX idx_topic_deliv_msg ON topic_deliveries (message_id);
`,
};
