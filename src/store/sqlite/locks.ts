import type { SqliteDatabase } from "./database.js";

/**
 * Named leases (`acquireLock`/`releaseLock`): one owner at a time until the lease lapses. Used for
 * leader election and once-per-tick work across processes.
 */
export class Locks {
  private readonly take;
  private readonly drop;
  private readonly sweepRows;

  constructor(db: SqliteDatabase) {
    this.take = db.prepare(`
      INSERT INTO locks (name, owner, expires_at) VALUES (@name, @owner, @expiresAt)
      ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
      WHERE locks.owner = excluded.owner OR locks.expires_at <= @now`);
    this.drop = db.prepare("DELETE FROM locks WHERE name = ? AND owner = ? AND expires_at > ?");
    this.sweepRows = db.prepare("DELETE FROM locks WHERE expires_at <= ?");
  }

  /** Takes or renews the lease; false while another owner holds it unexpired. */
  acquire(name: string, owner: string, ttlMs: number, now: number): boolean {
    return this.take.run({ name, owner, expiresAt: now + ttlMs, now }).changes > 0;
  }

  release(name: string, owner: string, now: number): boolean {
    return this.drop.run(name, owner, now).changes > 0;
  }

  /** Deletes lapsed leases. */
  sweep(now: number): number {
    return this.sweepRows.run(now).changes;
  }
}
