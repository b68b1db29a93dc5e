import { closeSync, fsyncSync, openSync, renameSync, rmSync } from "node:fs";
import type { SqliteDatabase } from "./database.js";
import { migrate } from "./migrate.js";

/**
 * Opening a file written by MQLite (the original, schema token "5": a `meta` table and the tables
 * of its spec §10.2) in place. Its tables are renamed aside, ours are created at schema 8 (the
 * version this importer writes; later migrations then run as for any of our files), every row is
 * copied across and the old tables are dropped, all in one transaction: a crash leaves the file as
 * MQLite wrote it. A copy of the file is kept beside it first (`<file>.v5.bak`).
 *
 * What is kept: every queue with its whole config, every subscription with its filter, every
 * message in every state with its sequence number, delivery count, lease (its lock token and end:
 * a live lease still settles), times and dead-letter reason; the sequence high-water mark; dedup
 * entries and settlement receipts. Receive attempts (a retried receive's replay, five minutes at
 * most) are kept when their stored batch is in the wire's form, and dropped otherwise: a retry then
 * claims afresh.
 */

/** The schema our importer writes; migrations above it run afterwards as usual. */
const TARGET_VERSION = 8;

/** Messages copied per statement, so a large file reports its progress. */
const CHUNK = 10_000;

/** MQLite's tables, renamed `v5_<name>` during the import. */
const V5_TABLES = ["messages", "subscriptions", "dedup", "settlement_receipts", "receive_attempts", "queues"];

/** What an import copied. */
export interface V5ImportCounts {
  queues: number;
  subscriptions: number;
  messages: number;
  dedup: number;
  receipts: number;
  receiveAttempts: number;
}

/** Called while messages are copied: `done` of `total`. */
export type V5Progress = (done: number, total: number) => void;

/** True for a file MQLite wrote: its `meta` table says schema "5" and ours is absent. */
export function isMqliteV5(db: SqliteDatabase): boolean {
  const tables = new Set(
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]).map(String),
  );
  if (!tables.has("meta") || tables.has("schema_version")) return false;
  const v = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get();
  return v === "5";
}

/** The backup's path beside `file`. */
export function v5BackupPath(file: string): string {
  return `${file}.v5.bak`;
}

/**
 * Writes a consistent copy of the file (VACUUM INTO reads one snapshot, whatever else runs) to
 * `<file>.v5.bak`: into a temporary name first, synced, then renamed, so a crash never leaves a
 * half-written backup under the final name. An earlier backup is replaced: the file is still
 * MQLite's, so the new copy holds at least what the old one did.
 */
export function backupV5(db: SqliteDatabase, file: string): string {
  const backup = v5BackupPath(file);
  const temp = `${backup}.${process.pid}.tmp`; // two processes opening the file at once each write their own
  rmSync(temp, { force: true });
  db.prepare("VACUUM INTO ?").run(temp);
  const fd = openSync(temp, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, backup);
  return backup;
}

/**
 * Upgrades a MQLite file in place, in one transaction (see the module's comment). Does nothing and
 * answers undefined when the file is no longer MQLite's (another process upgraded it first).
 */
export function importV5(db: SqliteDatabase, now: number, progress?: V5Progress): V5ImportCounts | undefined {
  // Foreign keys are checked by the tables' own rows; turning them off spares the copies a lookup
  // per row (the pragma cannot change inside a transaction).
  const foreignKeys = db.pragma("foreign_keys", { simple: true }) as number;
  db.pragma("foreign_keys = OFF");
  try {
    const run = db.transaction(() => (isMqliteV5(db) ? copyAcross(db, now, progress) : undefined));
    const counts = run.immediate();
    if (counts) db.pragma("optimize");
    return counts;
  } finally {
    db.pragma(`foreign_keys = ${foreignKeys ? "ON" : "OFF"}`);
  }
}

function copyAcross(db: SqliteDatabase, now: number, progress?: V5Progress): V5ImportCounts {
  // MQLite's index names overlap ours: drop its indexes, then rename its tables aside.
  const indexes = db
    .prepare(
      `SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${V5_TABLES.map(() => "?").join(", ")})`,
    )
    .pluck()
    .all(...V5_TABLES) as string[];
  for (const name of indexes) db.exec(`DROP INDEX "${name.replaceAll('"', '""')}"`);
  const present = new Set(
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[],
  );
  for (const t of V5_TABLES) {
    if (!present.has(t)) throw new Error(`mqlite: the MQLite file has no ${t} table`);
    db.exec(`ALTER TABLE ${t} RENAME TO v5_${t}`);
  }
  db.exec(
    "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT",
  );
  migrate(db, now, TARGET_VERSION);

  const queues = db
    .prepare(`
      INSERT INTO queues (name, kind, lock_duration_ms, max_delivery_count, default_ttl_ms, dead_letter_on_expire,
        dedup_window_ms, ordering_mode, dlq_max_age_ms, dlq_max_count, dlq_max_bytes, created_at, updated_at)
      SELECT name, kind, lock_duration_ms, max_delivery_count, default_ttl_ms, dead_letter_on_expire,
        dedup_window_ms, ordering_mode, dlq_max_age_ms, dlq_max_count, dlq_max_bytes, created_at, updated_at
      FROM v5_queues`)
    .run().changes;
  // MQLite stores `{"expr": "..."}`; we store the expression (absent or empty: match all).
  const subscriptions = db
    .prepare(`
      INSERT INTO subscriptions (topic, name, kind, filter, paused, created_at, updated_at)
      SELECT topic, subscription, 'queue',
        CASE WHEN json_valid(filter_json) THEN nullif(json_extract(filter_json, '$.expr'), '') END,
        0, created_at, created_at
      FROM v5_subscriptions`)
    .run().changes;

  const total = db.prepare("SELECT count(*) FROM v5_messages").pluck().get() as number;
  // A dead letter's settlement time is not stored by MQLite: its publish time stands in.
  const copyMessages = db.prepare(`
    INSERT INTO messages (id, queue, state, visible_at, locked_until, lock_token, delivery_count, enqueued_at,
      expires_at, message_id, correlation_id, reply_to, group_id, content_type, subject, properties, body,
      dead_letter_reason, dead_letter_description, delivered_at, settled_at)
    SELECT id, queue, state, visible_at, locked_until, lock_token, delivery_count, enqueued_at,
      expires_at, message_id, correlation_id, reply_to, group_id, content_type, subject, properties, body,
      dead_letter_reason, dead_letter_description, 0,
      CASE WHEN state = 'dead_lettered' THEN enqueued_at ELSE 0 END
    FROM v5_messages WHERE id > ? ORDER BY id LIMIT ${CHUNK}
    RETURNING id`);
  let copied = 0;
  let after = 0;
  progress?.(0, total);
  for (;;) {
    const ids = copyMessages.pluck().all(after) as number[];
    if (ids.length === 0) break;
    copied += ids.length;
    after = Math.max(...ids);
    progress?.(copied, total);
  }
  // Never reuse a sequence number MQLite handed out, even one whose message is gone.
  db.prepare(`
    UPDATE sequences SET reserved = max(reserved,
      ifnull((SELECT seq FROM sqlite_sequence WHERE name = 'v5_messages'), 0),
      ifnull((SELECT max(id) FROM messages), 0))
    WHERE name = 'messages'`).run();

  const dedup = db
    .prepare(`
      INSERT INTO dedup (queue, key, request_hash, seq_number, seen_at)
      SELECT queue, message_id, request_hash, seq_number, seen_at FROM v5_dedup`)
    .run().changes;
  const receipts = db
    .prepare(`
      INSERT INTO settlement_receipts (queue, seq_number, lock_token, operation, args, created_at, expires_at)
      SELECT queue, seq_number, lock_token, operation, args, created_at, expires_at FROM v5_settlement_receipts`)
    .run().changes;
  const receiveAttempts = copyAttempts(db, now);

  for (const t of V5_TABLES) db.exec(`DROP TABLE v5_${t}`);
  db.exec("DROP TABLE meta");
  return { queues, subscriptions, messages: copied, dedup, receipts, receiveAttempts };
}

/** The wire's Message keys and ours, for a stored receive-attempt batch. */
const ATTEMPT_FIELDS: [wire: string, ours: string][] = [
  ["seq_number", "seqNumber"],
  ["body", "body"],
  ["message_id", "messageId"],
  ["correlation_id", "correlationId"],
  ["reply_to", "replyTo"],
  ["group_id", "groupId"],
  ["content_type", "contentType"],
  ["subject", "subject"],
  ["properties", "properties"],
  ["enqueued_at_ms", "enqueuedAt"],
  ["delivery_count", "deliveryCount"],
  ["locked_until_ms", "lockedUntil"],
  ["lock_token", "lockToken"],
];

/** Copies the live receive attempts whose batch reads as wire messages; answers how many. */
function copyAttempts(db: SqliteDatabase, now: number): number {
  const rows = db
    .prepare(
      "SELECT queue, attempt_id, response, created_at, expires_at FROM v5_receive_attempts WHERE expires_at > ?",
    )
    .all(now) as {
    queue: string;
    attempt_id: string;
    response: string;
    created_at: number;
    expires_at: number;
  }[];
  const insert = db.prepare(
    "INSERT INTO receive_attempts (queue, attempt_id, response, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
  );
  let n = 0;
  for (const row of rows) {
    const batch = attemptBatch(row.response);
    if (!batch) continue;
    insert.run(row.queue, row.attempt_id, JSON.stringify(batch), row.created_at, row.expires_at);
    n++;
  }
  return n;
}

function attemptBatch(response: string): Record<string, unknown>[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(response);
  } catch {
    return undefined;
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { messages?: unknown })?.messages;
  if (!Array.isArray(list)) return undefined;
  const out: Record<string, unknown>[] = [];
  for (const m of list) {
    if (
      typeof m !== "object" ||
      m === null ||
      !Number.isSafeInteger((m as Record<string, unknown>).seq_number)
    )
      return undefined;
    const ours: Record<string, unknown> = { body: "", enqueuedAt: 0, deliveryCount: 0 };
    for (const [wire, key] of ATTEMPT_FIELDS) {
      const v = (m as Record<string, unknown>)[wire];
      if (v !== undefined && v !== null && v !== "") ours[key] = v;
    }
    out.push(ours);
  }
  return out;
}
