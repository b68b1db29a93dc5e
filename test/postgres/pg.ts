import { randomBytes } from "node:crypto";
import pg from "pg";

/** The PostgreSQL server the tests use (trust auth on 127.0.0.1:5432 by default). */
export const PG_DSN = process.env.MQLITE_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** A fresh schema name per subject. */
export function freshSchema(prefix = "mqt"): string {
  return `${prefix}_${randomBytes(6).toString("hex")}`;
}

/** Fails loudly (never skips) when the server cannot be reached. */
export async function requirePostgres(): Promise<void> {
  const client = new pg.Client({ connectionString: PG_DSN, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (err) {
    throw new Error(
      `PostgreSQL is not reachable at ${PG_DSN} (set MQLITE_TEST_PG): ${err instanceof Error ? err.message : String(err)}`,
    );
  } finally {
    await client.end().catch(() => {});
  }
}

/** Drops a test schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_DSN });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
