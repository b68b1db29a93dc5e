import { NameConflictError, NotFoundError } from "../../contract/errors.js";
import type { QueueConfig, QueueInfo } from "../../contract/types.js";
import { normalizeQueueConfig, type QueueRow, queueInfoFromRow } from "../../core/queue-config.js";
import type { Conn } from "./db.js";

/** A `queues` row on PostgreSQL: the SQLite row plus the config version that proves a cached copy fresh. */
export interface PgQueueRow extends QueueRow {
  version: number;
}

/**
 * The `queues` table. Rows are cached per node, keyed by name; a cached row is only ever used by a
 * statement that re-checks its `version` in the same snapshot (and retries with a fresh row when it
 * changed), so another node's `createQueue` or `deleteQueue` is never missed.
 */
export class PgQueueRegistry {
  private readonly cache = new Map<string, PgQueueRow>();

  /** The cached row, if any (only for statements that guard on its version). */
  cached(name: string): PgQueueRow | undefined {
    return this.cache.get(name);
  }

  forget(name: string): void {
    this.cache.delete(name);
  }

  /** Reads the row (and refreshes the cache). */
  async get(c: Conn, name: string): Promise<PgQueueRow | undefined> {
    const [row] = await c.q<PgQueueRow>("SELECT * FROM queues WHERE name = $1", [name]);
    if (row) this.cache.set(name, row);
    else this.cache.delete(name);
    return row;
  }

  async require(c: Conn, name: string): Promise<PgQueueRow> {
    const row = await this.get(c, name);
    if (!row) throw new NotFoundError("mqlite: queue not found");
    return row;
  }

  /** Reads several rows at once. */
  async getMany(c: Conn, names: string[]): Promise<Map<string, PgQueueRow>> {
    const rows = await c.q<PgQueueRow>("SELECT * FROM queues WHERE name = ANY($1::text[])", [names]);
    const out = new Map<string, PgQueueRow>();
    for (const r of rows) {
      out.set(r.name, r);
      this.cache.set(r.name, r);
    }
    return out;
  }

  /** Every queue's row, by name. */
  rows(c: Conn): Promise<PgQueueRow[]> {
    return c.q<PgQueueRow>('SELECT * FROM queues ORDER BY name COLLATE "C"');
  }

  async list(c: Conn): Promise<QueueInfo[]> {
    return (await this.rows(c)).map(queueInfoFromRow);
  }

  async isLiveTopic(c: Conn, name: string): Promise<boolean> {
    const rows = await c.q(
      "SELECT 1 WHERE EXISTS (SELECT 1 FROM subscriptions WHERE topic = $1) OR EXISTS (SELECT 1 FROM topics WHERE name = $1)",
      [name],
    );
    return rows.length > 0;
  }

  /**
   * Creates the queue or replaces its whole config (inside a transaction holding the namespace
   * lock). Refuses a live topic's name and a cross-kind upsert with `NameConflictError` (the rule of
   * `createQueue`, for the queues a send creates).
   */
  async upsert(c: Conn, name: string, config: QueueConfig | undefined, now: number): Promise<void> {
    const n = normalizeQueueConfig(config);
    if (await this.isLiveTopic(c, name)) throw new NameConflictError(`mqlite: "${name}" is a topic`);
    const [existing] = await c.q<{ kind: string }>("SELECT kind FROM queues WHERE name = $1", [name]);
    if (existing && existing.kind !== n.kind) {
      throw new NameConflictError(
        `mqlite: "${name}" exists as a ${existing.kind === "queue" ? "queue" : "subscription"}`,
      );
    }
    await this.save(c, name, n, now);
  }

  /**
   * Writes the queue's row: a new queue, or the whole config of an existing one (a new config
   * version, so cached copies are refreshed). The committed row is cached.
   */
  async save(c: Conn, name: string, n: Required<QueueConfig>, now: number): Promise<void> {
    const [row] = await c.q<PgQueueRow>(
      `INSERT INTO queues (name, kind, lock_duration_ms, max_delivery_count, default_ttl_ms, dead_letter_on_expire,
         dedup_window_ms, ordering_mode, dlq_max_age_ms, dlq_max_count, dlq_max_bytes, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)
       ON CONFLICT (name) DO UPDATE SET
         lock_duration_ms = excluded.lock_duration_ms, max_delivery_count = excluded.max_delivery_count,
         default_ttl_ms = excluded.default_ttl_ms, dead_letter_on_expire = excluded.dead_letter_on_expire,
         dedup_window_ms = excluded.dedup_window_ms, ordering_mode = excluded.ordering_mode,
         dlq_max_age_ms = excluded.dlq_max_age_ms, dlq_max_count = excluded.dlq_max_count,
         dlq_max_bytes = excluded.dlq_max_bytes, version = nextval('config_version'),
         updated_at = excluded.updated_at
       RETURNING *`,
      [
        name,
        n.kind,
        n.lockDurationMs,
        n.maxDeliveryCount,
        n.defaultTtlMs,
        n.deadLetterOnExpire ? 1 : 0,
        n.dedupWindowMs,
        n.orderingMode,
        n.dlqMaxAgeMs,
        n.dlqMaxCount,
        n.dlqMaxBytes,
        now,
      ],
    );
    if (row) c.afterCommit(() => this.cache.set(name, row));
    this.cache.delete(name);
  }

  /** Forgets the cached row of a queue this transaction changes, now and once it commits. */
  forgetAfter(c: Conn, name: string): void {
    this.cache.delete(name);
    c.afterCommit(() => this.cache.delete(name));
  }
}
