import type { NamedLockOps } from "../../core/verbs/named-locks.js";
import type { SqliteDatabase } from "./database.js";

/** Named leases' statements on SQLite (the rules are in core/verbs/named-locks.ts). */
export class SqliteNamedLockOps implements NamedLockOps {
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

  acquire(a: { name: string; owner: string; expiresAt: number; now: number }): boolean {
    return this.take.run(a).changes > 0;
  }

  release(a: { name: string; owner: string; now: number }): boolean {
    return this.drop.run(a.name, a.owner, a.now).changes > 0;
  }

  /** Deletes lapsed leases. */
  sweep(now: number): number {
    return this.sweepRows.run(now).changes;
  }
}
