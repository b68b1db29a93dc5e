import type pg from "pg";
import { type StorageFullError, UnavailableError } from "../../contract/errors.js";
import { notReadyFor } from "../../contract/readiness.js";
import type { Readiness } from "../../contract/types.js";

/** How long `/readyz` waits for a pooled connection and the health query together. */
export const READINESS_TIMEOUT_MS = 2000;

/**
 * Whether the PostgreSQL server behind `pool` can take writes, without writing: the last write's
 * store failure (a full disk; cleared by the next write that commits), else one round trip on a
 * pooled connection within `timeoutMs` that asks whether the session could write (a standby in
 * recovery, or a read-only default, cannot). No connection or no answer in time is `db_unavailable`.
 */
export async function pgReadiness(
  pool: pg.Pool,
  storeFailure: StorageFullError | undefined,
  timeoutMs = READINESS_TIMEOUT_MS,
): Promise<Readiness> {
  if (storeFailure) return notReadyFor(storeFailure)!;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new UnavailableError(`mqlite: PostgreSQL did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  const health = (async () => {
    const client = await pool.connect();
    let broken = false;
    try {
      const { rows } = await client.query<{ recovery: boolean; read_only: string }>(
        "SELECT pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS read_only",
      );
      return rows[0]!;
    } catch (err) {
      broken = true;
      throw err;
    } finally {
      client.release(broken || undefined);
    }
  })();
  try {
    const row = await Promise.race([health, timeout]);
    if (row.recovery || row.read_only === "on") {
      const why = row.recovery ? "in recovery (a standby)" : "read-only for this session";
      return notReadyFor(new UnavailableError(`mqlite: the PostgreSQL server is ${why}`))!;
    }
    return { ready: true };
  } catch (err) {
    // A late answer after the timeout still releases its connection (above); its error is moot.
    health.catch(() => undefined);
    if (err instanceof UnavailableError) return notReadyFor(err)!;
    const message = err instanceof Error ? err.message : String(err);
    return notReadyFor(new UnavailableError(`mqlite: PostgreSQL is unavailable: ${message}`))!;
  } finally {
    clearTimeout(timer);
  }
}
