import type { PgMigration } from "./migration.js";

/**
 * The broker's tables on PostgreSQL: the same model as the SQLite schema (every time an epoch-ms
 * BIGINT from the broker's clock), with a per-queue config `version` so that nodes can cache a
 * queue's row and prove it fresh inside the statement that uses it.
 *
 * The claim seeks a partial index of claimable rows; the head-of-line probes are single-state index
 * seeks, as on SQLite.
 */
export const initial: PgMigration = {
  version: 1,
  name: "initial",
  sql: `
CREATE SEQUENCE config_version;

CREATE TABLE queues (
  name                  text PRIMARY KEY,
  kind                  text NOT NULL DEFAULT 'queue' CHECK (kind IN ('queue', 'subscription')),
  lock_duration_ms      bigint NOT NULL DEFAULT 30000,
  max_delivery_count    integer NOT NULL DEFAULT 10,
  default_ttl_ms        bigint NOT NULL DEFAULT 0,
  dead_letter_on_expire integer NOT NULL DEFAULT 1,
  dedup_window_ms       bigint NOT NULL DEFAULT 0,
  ordering_mode         text NOT NULL DEFAULT 'standard' CHECK (ordering_mode IN ('standard', 'group_fifo', 'strict_fifo')),
  dlq_max_age_ms        bigint NOT NULL DEFAULT 0,
  dlq_max_count         bigint NOT NULL DEFAULT 0,
  dlq_max_bytes         bigint NOT NULL DEFAULT 0,
  version               bigint NOT NULL DEFAULT nextval('config_version'),
  created_at            bigint NOT NULL,
  updated_at            bigint NOT NULL
);

CREATE TABLE messages (
  id                      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  queue                   text NOT NULL REFERENCES queues(name) ON DELETE CASCADE,
  state                   text NOT NULL CHECK (state IN ('active', 'locked', 'deferred', 'scheduled', 'completed', 'cancelled', 'dead_lettered')),
  priority                integer NOT NULL DEFAULT 0,
  visible_at              bigint NOT NULL DEFAULT 0,
  locked_until            bigint NOT NULL DEFAULT 0,
  lock_token              text,
  delivery_count          integer NOT NULL DEFAULT 0,
  enqueued_at             bigint NOT NULL,
  expires_at              bigint NOT NULL DEFAULT 0,
  message_id              text,
  correlation_id          text,
  reply_to                text,
  group_id                text,
  content_type            text,
  subject                 text,
  properties              text,
  body                    bytea NOT NULL,
  dead_letter_reason      text,
  dead_letter_description text
);

-- The claim seek: claimable rows of a queue in delivery order.
CREATE INDEX idx_msg_claim ON messages (queue, priority DESC, id) WHERE state = 'active';
-- Per-queue, per-state: strict head-of-line probes, peek, stats, redrive, purge, cascade deletes.
CREATE INDEX idx_msg_queue_state ON messages (queue, state, id);
-- Group head-of-line probes.
CREATE INDEX idx_msg_group ON messages (queue, group_id, state, id) WHERE group_id IS NOT NULL;
-- Reaper: leases that lapsed.
CREATE INDEX idx_msg_lease ON messages (locked_until) WHERE state = 'locked';
-- Scheduler: scheduled rows that came due.
CREATE INDEX idx_msg_due ON messages (visible_at) WHERE state = 'scheduled';
-- TTL sweep: live rows with a TTL.
CREATE INDEX idx_msg_expire ON messages (expires_at) WHERE expires_at > 0 AND state <> 'dead_lettered';

CREATE TABLE dedup (
  queue        text NOT NULL,
  key          text NOT NULL,
  request_hash text NOT NULL,
  seq_number   bigint NOT NULL,
  seen_at      bigint NOT NULL,
  PRIMARY KEY (queue, key)
);
CREATE INDEX idx_dedup_seen ON dedup (seen_at);

CREATE TABLE settlement_receipts (
  queue      text NOT NULL,
  seq_number bigint NOT NULL,
  lock_token text NOT NULL,
  operation  text NOT NULL,
  args       text NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (queue, seq_number, lock_token, operation, args)
);
CREATE INDEX idx_settlement_expire ON settlement_receipts (expires_at);

CREATE TABLE receive_attempts (
  queue      text NOT NULL,
  attempt_id text NOT NULL,
  response   text NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (queue, attempt_id)
);
CREATE INDEX idx_recv_attempt_expire ON receive_attempts (expires_at);

-- One subscription table for every kind of target ('queue', and the job face's 'task' and 'log').
CREATE TABLE subscriptions (
  topic      text NOT NULL,
  name       text NOT NULL,
  kind       text NOT NULL DEFAULT 'queue' CHECK (kind IN ('queue', 'task', 'log')),
  filter     text,
  paused     integer NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (topic, name)
);
CREATE UNIQUE INDEX idx_subs_queue_name ON subscriptions (name) WHERE kind = 'queue';
`,
};
