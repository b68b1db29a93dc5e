import { createHash } from "node:crypto";
import Database from "better-sqlite3";

// A file as MQLite (the original, schema "5") writes it: the tables of its spec §10.2, written here
// from that layout with better-sqlite3.
const V5_DDL = `
CREATE TABLE queues (
  name TEXT PRIMARY KEY,
  kind TEXT NOT NULL DEFAULT 'queue' CHECK (kind IN ('queue','subscription')),
  lock_duration_ms INT NOT NULL DEFAULT 30000,
  max_delivery_count INT NOT NULL DEFAULT 10,
  default_ttl_ms INT NOT NULL DEFAULT 0,
  dead_letter_on_expire INT NOT NULL DEFAULT 1,
  dedup_window_ms INT NOT NULL DEFAULT 0,
  ordering_mode TEXT NOT NULL DEFAULT 'standard' CHECK (ordering_mode IN ('standard','group_fifo','strict_fifo')),
  dlq_max_age_ms INT NOT NULL DEFAULT 0,
  dlq_max_count INT NOT NULL DEFAULT 0,
  dlq_max_bytes INT NOT NULL DEFAULT 0,
  created_at INT NOT NULL,
  updated_at INT NOT NULL
) STRICT;
CREATE TABLE subscriptions (
  topic TEXT NOT NULL,
  subscription TEXT NOT NULL REFERENCES queues(name) ON DELETE CASCADE,
  filter_json TEXT,
  created_at INT NOT NULL,
  PRIMARY KEY (topic, subscription)
) STRICT;
CREATE INDEX idx_subs_by_topic ON subscriptions(topic);
CREATE TABLE messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  queue TEXT NOT NULL REFERENCES queues(name) ON DELETE CASCADE,
  state TEXT NOT NULL CHECK (state IN ('active','locked','deferred','scheduled','completed','dead_lettered')),
  visible_at INT NOT NULL DEFAULT 0,
  locked_until INT NOT NULL DEFAULT 0,
  lock_token TEXT,
  delivery_count INT NOT NULL DEFAULT 0,
  enqueued_at INT NOT NULL,
  expires_at INT NOT NULL DEFAULT 0,
  message_id TEXT, correlation_id TEXT, reply_to TEXT, group_id TEXT, content_type TEXT, subject TEXT,
  properties TEXT,
  body BLOB NOT NULL,
  dead_letter_reason TEXT,
  dead_letter_description TEXT
) STRICT;
CREATE INDEX idx_msg_active ON messages(queue, id) WHERE state='active';
CREATE INDEX idx_msg_locked ON messages(state, locked_until) WHERE state='locked';
CREATE INDEX idx_msg_scheduled ON messages(state, visible_at) WHERE state='scheduled';
CREATE INDEX idx_msg_deferred ON messages(queue, id) WHERE state='deferred';
CREATE INDEX idx_msg_expire ON messages(expires_at) WHERE expires_at>0;
CREATE INDEX idx_msg_dlq ON messages(queue, id) WHERE state='dead_lettered';
CREATE INDEX idx_msg_group_inflight ON messages(queue, group_id, state, locked_until) WHERE group_id IS NOT NULL;
CREATE INDEX idx_msg_sched_head ON messages(queue, id) WHERE state='scheduled';
CREATE INDEX idx_msg_locked_head ON messages(queue, id) WHERE state='locked';
CREATE TABLE dedup (
  queue TEXT NOT NULL, message_id TEXT NOT NULL, request_hash TEXT NOT NULL, seq_number INT NOT NULL, seen_at INT NOT NULL,
  PRIMARY KEY (queue, message_id)
) STRICT;
CREATE INDEX idx_dedup_seen ON dedup(seen_at);
CREATE TABLE settlement_receipts (
  lock_token TEXT NOT NULL, queue TEXT NOT NULL, seq_number INT NOT NULL, operation TEXT NOT NULL, args TEXT NOT NULL,
  created_at INT NOT NULL, expires_at INT NOT NULL,
  PRIMARY KEY (queue, seq_number, lock_token, operation, args)
) STRICT;
CREATE INDEX idx_settlement_expire ON settlement_receipts(expires_at);
CREATE TABLE receive_attempts (
  queue TEXT NOT NULL, attempt_id TEXT NOT NULL, response TEXT NOT NULL, created_at INT NOT NULL, expires_at INT NOT NULL,
  PRIMARY KEY (queue, attempt_id)
) STRICT;
CREATE INDEX idx_recv_attempt_expire ON receive_attempts(expires_at);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) STRICT;
INSERT INTO meta (key, value) VALUES ('schema_version', '5');
`;

export const NOW = 1_767_225_600_000;
export const LIVE = "a".repeat(32);
export const LAPSED = "b".repeat(32);
export const RECEIPT = "c".repeat(32);
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** Writes a schema-5 file at `path` holding a message in every state (and `extraMessages` more). */
export function writeV5File(path: string, extraMessages = 0): void {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec(V5_DDL);
  const queue =
    db.prepare(`INSERT INTO queues (name, kind, lock_duration_ms, max_delivery_count, default_ttl_ms,
    dead_letter_on_expire, dedup_window_ms, ordering_mode, dlq_max_age_ms, dlq_max_count, dlq_max_bytes, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  queue.run(
    "orders",
    "queue",
    60_000,
    5,
    3_600_000,
    0,
    600_000,
    "group_fifo",
    86_400_000,
    1000,
    -1,
    NOW - 9,
    NOW - 8,
  );
  queue.run("strict", "queue", 30_000, 10, 0, 1, 0, "strict_fifo", 0, 0, 0, NOW - 7, NOW - 7);
  queue.run("audit", "subscription", 30_000, 10, 0, 1, 0, "standard", 0, 0, 0, NOW - 6, NOW - 6);
  queue.run("firehose", "subscription", 30_000, 10, 0, 1, 0, "standard", 0, 0, 0, NOW - 6, NOW - 6);
  const sub = db.prepare(
    "INSERT INTO subscriptions (topic, subscription, filter_json, created_at) VALUES (?, ?, ?, ?)",
  );
  sub.run("events", "audit", JSON.stringify({ expr: 'subject == "x"' }), NOW - 5);
  sub.run("events", "firehose", null, NOW - 5);
  const msg =
    db.prepare(`INSERT INTO messages (id, queue, state, visible_at, locked_until, lock_token, delivery_count,
    enqueued_at, expires_at, message_id, correlation_id, reply_to, group_id, content_type, subject, properties, body,
    dead_letter_reason, dead_letter_description) VALUES
    (@id, @queue, @state, @visible, @until, @token, @count, @enq, @exp, @mid, @cid, @reply, @group, @ctype, @subject, @props, @body, @reason, @desc)`);
  const row = (over: Record<string, unknown>) =>
    msg.run({
      queue: "orders",
      visible: NOW - 100,
      until: 0,
      token: null,
      count: 0,
      enq: NOW - 100,
      exp: 0,
      mid: null,
      cid: null,
      reply: null,
      group: "g0",
      ctype: null,
      subject: null,
      props: null,
      reason: null,
      desc: null,
      ...over,
      body: Buffer.from(String(over.body)),
    });
  row({
    id: 3,
    state: "active",
    body: "active",
    mid: "m-3",
    cid: "c",
    reply: "r",
    group: "g1",
    ctype: "text/plain",
    subject: "s",
    props: '{"k":"v"}',
    exp: NOW + 3_500_000,
  });
  row({ id: 5, state: "locked", body: "live", group: "g2", until: NOW + 30_000, token: LIVE, count: 1 });
  row({ id: 6, state: "locked", body: "lapsed", group: "g3", until: NOW - 1, token: LAPSED, count: 2 });
  row({ id: 8, state: "deferred", body: "deferred", group: "g4", count: 1 });
  row({ id: 9, state: "scheduled", body: "scheduled", group: "g5", visible: NOW + 60_000 });
  row({
    id: 10,
    state: "dead_lettered",
    body: "dead",
    group: "g6",
    count: 5,
    reason: "AppRequested",
    desc: "bad",
  });
  row({ id: 11, queue: "strict", state: "active", body: "strict", group: null });
  row({ id: 12, queue: "audit", state: "active", body: "audited", group: null, subject: "x" });
  for (let i = 0; i < extraMessages; i++)
    row({ id: 100 + i, queue: "strict", state: "active", body: `n${i}`, group: null });
  // A deleted message's number (40) and a higher one handed out and gone (50): never reused.
  db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'messages'").run(
    Math.max(50, 100 + extraMessages),
  );
  db.prepare(
    "INSERT INTO dedup (queue, message_id, request_hash, seq_number, seen_at) VALUES ('orders', 'm-3', ?, 3, ?)",
  ).run(sha256("active"), NOW - 1000);
  db.prepare(`INSERT INTO settlement_receipts (lock_token, queue, seq_number, operation, args, created_at, expires_at)
    VALUES (?, 'orders', 40, 'completed', '', ?, ?)`).run(RECEIPT, NOW - 1000, NOW + 1_799_000);
  const attempt = JSON.stringify([
    {
      seq_number: 5,
      body: Buffer.from("live").toString("base64"),
      group_id: "g2",
      delivery_count: 1,
      enqueued_at_ms: NOW - 100,
      locked_until_ms: NOW + 30_000,
      lock_token: LIVE,
    },
  ]);
  db.prepare(`INSERT INTO receive_attempts (queue, attempt_id, response, created_at, expires_at)
    VALUES ('orders', 'attempt-1', ?, ?, ?)`).run(attempt, NOW - 100, NOW + 299_900);
  db.close();
}
