import { NameConflictError, NotFoundError } from "../../contract/errors.js";
import type { QueueConfig, QueueInfo } from "../../contract/types.js";
import { normalizeQueueConfig, type QueueRow, queueInfoFromRow } from "../../core/queue-config.js";
import type { SqliteDatabase } from "./database.js";

/**
 * The `queues` table with an in-process cache of rows. The cache is dropped whenever another
 * connection commits (the engine checks `PRAGMA data_version` at the start of each write), so
 * several processes sharing one file see each other's configs.
 */
export class QueueRegistry {
  private readonly cache = new Map<string, QueueRow>();
  private readonly selectOne;
  private readonly selectAll;
  private readonly upsertRow;
  private readonly isTopic;

  constructor(readonly db: SqliteDatabase) {
    this.selectOne = db.prepare("SELECT * FROM queues WHERE name = ?");
    this.selectAll = db.prepare("SELECT * FROM queues ORDER BY name");
    this.upsertRow = db.prepare(`
      INSERT INTO queues (name, kind, lock_duration_ms, max_delivery_count, default_ttl_ms, dead_letter_on_expire,
        dedup_window_ms, ordering_mode, dlq_max_age_ms, dlq_max_count, dlq_max_bytes, created_at, updated_at)
      VALUES (@name, @kind, @lockDurationMs, @maxDeliveryCount, @defaultTtlMs, @deadLetterOnExpire,
        @dedupWindowMs, @orderingMode, @dlqMaxAgeMs, @dlqMaxCount, @dlqMaxBytes, @now, @now)
      ON CONFLICT (name) DO UPDATE SET
        lock_duration_ms = excluded.lock_duration_ms, max_delivery_count = excluded.max_delivery_count,
        default_ttl_ms = excluded.default_ttl_ms, dead_letter_on_expire = excluded.dead_letter_on_expire,
        dedup_window_ms = excluded.dedup_window_ms, ordering_mode = excluded.ordering_mode,
        dlq_max_age_ms = excluded.dlq_max_age_ms, dlq_max_count = excluded.dlq_max_count,
        dlq_max_bytes = excluded.dlq_max_bytes, updated_at = excluded.updated_at`);
    this.isTopic = db.prepare(
      "SELECT 1 WHERE EXISTS (SELECT 1 FROM subscriptions WHERE topic = @n) OR EXISTS (SELECT 1 FROM topics WHERE name = @n)",
    );
  }

  /** The queue's row, or undefined. */
  get(name: string): QueueRow | undefined {
    const cached = this.cache.get(name);
    if (cached) return cached;
    const row = this.selectOne.get(name) as QueueRow | undefined;
    if (row) this.cache.set(name, row);
    return row;
  }

  /** The cached row, if any (no lookup): a send's short way (see `SqliteSendOps.insertFresh`). */
  cached(name: string): QueueRow | undefined {
    return this.cache.get(name);
  }

  /** The queue's row, or `NotFoundError`. */
  require(name: string): QueueRow {
    const row = this.get(name);
    if (!row) throw new NotFoundError("mqlite: queue not found");
    return row;
  }

  /** Every queue's row, by name. */
  rows(): QueueRow[] {
    return this.selectAll.all() as QueueRow[];
  }

  list(): QueueInfo[] {
    return this.rows().map(queueInfoFromRow);
  }

  /** True when `name` has subscriptions or is declared, i.e. is a live topic. */
  isLiveTopic(name: string): boolean {
    return this.isTopic.get({ n: name }) !== undefined;
  }

  /**
   * Creates the queue or replaces its whole config (inside a write). Refuses a live topic's name and
   * a cross-kind upsert with `NameConflictError` (the rule of `createQueue`, for the queues a send
   * creates).
   */
  upsert(name: string, config: QueueConfig | undefined, now: number): void {
    const normalized = normalizeQueueConfig(config);
    if (this.isLiveTopic(name)) throw new NameConflictError(`mqlite: "${name}" is a topic`);
    const existing = this.selectOne.get(name) as QueueRow | undefined;
    if (existing && existing.kind !== normalized.kind) {
      throw new NameConflictError(
        `mqlite: "${name}" exists as a ${existing.kind === "queue" ? "queue" : "subscription"}`,
      );
    }
    this.save(name, normalized, now);
  }

  /** Writes the queue's row: a new queue, or the whole config of an existing one (inside a write). */
  save(name: string, config: Required<QueueConfig>, now: number): void {
    this.upsertRow.run({ name, ...config, deadLetterOnExpire: config.deadLetterOnExpire ? 1 : 0, now });
    this.cache.delete(name);
  }

  /** Forgets the cached row of a queue this write changes. */
  forget(name: string): void {
    this.cache.delete(name);
  }

  /** Forgets every cached row (another connection may have changed them). */
  invalidate(): void {
    this.cache.clear();
  }
}
