import { randomBytes } from "node:crypto";
import pg from "pg";
import { silentLogger } from "../../src/contract/logger.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";

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

/** A broker on a fresh schema, and a connection of its own inside that schema (`search_path`). */
export interface BrokerWithAdmin {
  schema: string;
  broker: PostgresBroker;
  /** For what a test reads or explains directly. */
  admin: pg.Client;
  /** Ends both, and drops the schema. */
  close(): Promise<void>;
}

/**
 * Opens a broker on a fresh schema (`prefix` names it) without background work (a test runs the
 * upkeep itself), and an admin connection inside the schema.
 */
export async function brokerWithAdmin(prefix: string): Promise<BrokerWithAdmin> {
  const schema = freshSchema(prefix);
  const broker = await PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger });
  const admin = new pg.Client({ connectionString: PG_DSN });
  await admin.connect();
  await admin.query(`SET search_path = "${schema}"`);
  return {
    schema,
    broker,
    admin,
    close: async () => {
      await admin.end();
      await broker.close();
      await dropSchema(schema);
    },
  };
}
