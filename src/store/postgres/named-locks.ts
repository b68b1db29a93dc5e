import type { Async } from "../../core/port.js";
import type { NamedLockOps } from "../../core/verbs/named-locks.js";
import type { Conn } from "./db.js";
import { pgName } from "./names.js";

/** Named leases' statements on PostgreSQL, on one connection (the rules are in core/verbs/named-locks.ts). */
export class PgNamedLockOps implements Async<NamedLockOps> {
  constructor(private readonly c: Conn) {}

  async acquire(a: { name: string; owner: string; expiresAt: number; now: number }): Promise<boolean> {
    const rows = await this.c.q(
      `INSERT INTO locks (name, owner, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE locks.owner = excluded.owner OR locks.expires_at <= $4
       RETURNING 1`,
      [a.name, a.owner, a.expiresAt, a.now],
    );
    return rows.length > 0;
  }

  async release(a: { name: string; owner: string; now: number }): Promise<boolean> {
    const rows = await this.c.q(
      "DELETE FROM locks WHERE name = $1 AND owner = $2 AND expires_at > $3 RETURNING 1",
      [pgName(a.name), pgName(a.owner), a.now],
    );
    return rows.length > 0;
  }
}
