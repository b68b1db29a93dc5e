import type { Migration } from "./migration.js";

/**
 * The broker's tables. Every table is STRICT; every time is epoch ms.
 * The claim index is partial (only claimable rows), so a claim seeks in O(log n) whatever else the
 * queue holds; the head-of-line probes are single-state index seeks (never a `state IN (...)`, which
 * SQLite cannot match to a partial index).
 */
export const initial: Migration = {
  version: 1,
  name: "initial",
  sql: `
CREATE TABLE queues (
  name                  TEXT PRIMARY KEY,
  kind                  TEXT NOT NULL DEFAULT 'queue' CHECK (kind IN ('queue', 'subscription')),
  lock_duration_ms      INTEGER NOT NULL DEFAULT 30000,
  max_delivery_count    INTEGER NOT NULL DEFAULT 10,
  default_ttl_ms        INTEGER NOT NULL DEFAULT 0,
  dead_letter_on_expire INTEGER NOT NULL DEFAULT 1,
  dedup_window_ms       INTEGER NOT NULL DEFAULT 0,
  ordering_mode         TEXT NOT NULL DEFAULT 'standard' CHECK (ordering_mode IN ('standard', 'group_fifo', 'strict_fifo')),
  dlq_max_age_ms        INTEGER NOT NULL DEFAULT 0,
  dlq_max_count         INTEGER NOT NULL DEFAULT 0,
  dlq_max_bytes         INTEGER NOT NULL DEFAULT 0,
  created_at            INTEGER NOT NULL,
  updated_at            INTEGER NOT NULL
) STRICT;

CREATE TABLE messages (
  id                      INTEGER PRIMARY KEY AUTOINCREMENT,
  queue                   TEXT NOT NULL REFERENCES queues(name) ON DELETE CASCADE,
  state                   TEXT NOT NULL CHECK (state IN ('active', 'locked', 'deferred', 'scheduled', 'completed', 'cancelled', 'dead_lettered')),
  priority                INTEGER NOT NULL DEFAULT 0,
  visible_at              INTEGER NOT NULL DEFAULT 0,
  locked_until            INTEGER NOT NULL DEFAULT 0,
  lock_token              TEXT,
  delivery_count          INTEGER NOT NULL DEFAULT 0,
  enqueued_at             INTEGER NOT NULL,
  expires_at              INTEGER NOT NULL DEFAULT 0,
  message_id              TEXT,
  correlation_id          TEXT,
  reply_to                TEXT,
  group_id                TEXT,
  content_type            TEXT,
  subject                 TEXT,
  properties              TEXT,
  body                    BLOB NOT NULL,
  dead_letter_reason      TEXT,
  dead_letter_description TEXT
) STRICT;

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
-- TTL sweep: live rows with a TTL (dead letters keep their expires_at but are not swept again).
CREATE INDEX idx_msg_expire ON messages (expires_at) WHERE expires_at > 0 AND state <> 'dead_lettered';

CREATE TABLE dedup (
  queue        TEXT NOT NULL,
  key          TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  seq_number   INTEGER NOT NULL,
  seen_at      INTEGER NOT NULL,
  PRIMARY KEY (queue, key)
) STRICT;
CREATE INDEX idx_dedup_seen ON dedup (seen_at);

CREATE TABLE settlement_receipts (
  queue      TEXT NOT NULL,
  seq_number INTEGER NOT NULL,
  lock_token TEXT NOT NULL,
  operation  TEXT NOT NULL,
  args       TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (queue, seq_number, lock_token, operation, args)
) STRICT;
CREATE INDEX idx_settlement_expire ON settlement_receipts (expires_at);

CREATE TABLE receive_attempts (
  queue      TEXT NOT NULL,
  attempt_id TEXT NOT NULL,
  response   TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (queue, attempt_id)
) STRICT;
CREATE INDEX idx_recv_attempt_expire ON receive_attempts (expires_at);

-- One subscription table for every kind of target: 'queue' (a backing queue named after the
-- subscription), and the job face's 'task' and 'log' kinds.
CREATE TABLE subscriptions (
  topic      TEXT NOT NULL,
  name       TEXT NOT NULL,
  kind       TEXT NOT NULL DEFAULT 'queue' CHECK (kind IN ('queue', 'task', 'log')),
  filter     TEXT,
  paused     INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (topic, name)
) STRICT;
-- A queue subscription's name is its backing queue's: it belongs to exactly one topic.
CREATE UNIQUE INDEX idx_subs_queue_name ON subscriptions (name) WHERE kind = 'queue';
`,
};
