import type pg from "pg";
import { NotMqliteDatabaseError, SchemaVersionMismatchError } from "../../contract/errors.js";
import { SESSION_LOCK, schemaLockId } from "./locks.js";
import { PG_SCHEMA_VERSION, pgMigrations } from "./migrations/index.js";

/** The schema version stored in `schema`, 0 when the schema is new or empty. Refuses a schema that is not ours. */
async function readVersion(client: pg.Client, schema: string): Promise<number> {
  const { rows } = await client.query<{ has_version: boolean; tables: number }>(
    `SELECT to_regclass(format('%I.schema_version', $1::text)) IS NOT NULL AS has_version,
            (SELECT count(*) FROM pg_tables WHERE schemaname = $1)::int AS tables`,
    [schema],
  );
  const row = rows[0]!;
  if (!row.has_version) {
    if (row.tables > 0) {
      throw new NotMqliteDatabaseError(
        `mqlite: schema "${schema}" holds tables of another application (no schema_version table)`,
      );
    }
    return 0;
  }
  const v = await client.query<{ v: number | null }>(
    `SELECT max(version)::int AS v FROM ${quoteIdent(schema)}.schema_version`,
  );
  return v.rows[0]?.v ?? 0;
}

function check(version: number, schema: string): void {
  if (version > PG_SCHEMA_VERSION) {
    throw new SchemaVersionMismatchError(
      `mqlite: schema "${schema}" is at version ${version}, newer than this build's ${PG_SCHEMA_VERSION}; upgrade mqlite`,
    );
  }
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Creates the schema and applies the pending migrations, each in its own transaction, under a
 * session advisory lock: nodes opening the same database at once migrate it once. A schema written
 * by a newer build is refused and left untouched. Returns the version now in force.
 */
export async function migrate(client: pg.Client, schema: string, now: number): Promise<number> {
  const lock = [SESSION_LOCK.migrate, schemaLockId(schema)];
  await client.query("SELECT pg_advisory_lock($1, $2)", lock);
  try {
    let current = await readVersion(client, schema);
    check(current, schema);
    if (current === PG_SCHEMA_VERSION) return current;
    for (const m of pgMigrations) {
      if (m.version <= current) continue;
      await client.query("BEGIN");
      try {
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
        await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
        if (current === 0) {
          await client.query(
            "CREATE TABLE schema_version (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)",
          );
        }
        await client.query(m.sql);
        await client.query("INSERT INTO schema_version (version, name, applied_at) VALUES ($1, $2, $3)", [
          m.version,
          m.name,
          now,
        ]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      }
      current = m.version;
    }
    return current;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1, $2)", lock).catch(() => {});
  }
}
