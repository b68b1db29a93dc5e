import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import pg from "pg";
import { NotMqliteDatabaseError, SchemaVersionMismatchError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { PG_SCHEMA_VERSION, pgMigrations } from "../../src/store/postgres/migrations/index.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

async function query(text: string): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: PG_DSN });
  await c.connect();
  try {
    return await c.query(text);
  } finally {
    await c.end();
  }
}

describe("the PostgreSQL schema", () => {
  const schemas: string[] = [];
  const fresh = () => {
    const s = freshSchema("mqschema");
    schemas.push(s);
    return s;
  };
  after(async () => {
    for (const s of schemas) await dropSchema(s);
  });

  it("nodes opening a fresh schema at once migrate it once, to the latest version", async () => {
    const schema = fresh();
    const brokers = await Promise.all(
      Array.from({ length: 4 }, () =>
        PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger }),
      ),
    );
    const { rows } = await query(`SELECT version, name FROM "${schema}".schema_version ORDER BY version`);
    assert.deepEqual(
      rows.map((r) => r.version),
      pgMigrations.map((m) => m.version),
    );
    const status = await brokers[0]!.status();
    assert.equal(status.backend, "postgres");
    assert.equal(status.schemaVersion, String(PG_SCHEMA_VERSION));
    assert.ok(!status.location.includes("password"));
    for (const b of brokers) await b.close();
  });

  it("a schema written by a newer build is refused and left untouched", async () => {
    const schema = fresh();
    const b = await PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger });
    await b.createQueue("kept");
    await b.close();
    await query(
      `INSERT INTO "${schema}".schema_version (version, name, applied_at) VALUES (999, 'future', 0)`,
    );
    await assert.rejects(
      PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger }),
      (err: unknown) => err instanceof SchemaVersionMismatchError && err.code === "schema_version_mismatch",
    );
    const { rows } = await query(`SELECT name FROM "${schema}".queues`);
    assert.deepEqual(
      rows.map((r) => r.name),
      ["kept"],
    );
  });

  it("a schema holding another application's tables is refused", async () => {
    const schema = fresh();
    await query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".customers (id int)`);
    await assert.rejects(
      PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger }),
      NotMqliteDatabaseError,
    );
  });

  it("openBroker picks the engine by location; ?schema= in the URL chooses the schema", async () => {
    const schema = fresh();
    const b = await openBroker(`${PG_DSN}?schema=${schema}`, { background: false, logger: silentLogger });
    assert.ok(b instanceof PostgresBroker);
    assert.equal(b.schema, schema);
    await b.close();
    const s = await openBroker(":memory:", { background: false });
    assert.equal((await s.status()).backend, "memory");
    await s.close();
  });

  it("an unreachable server fails loudly at open", async () => {
    await assert.rejects(
      PostgresBroker.open("postgres://postgres@127.0.0.1:1/postgres", {
        background: false,
        logger: silentLogger,
      }),
      /cannot open PostgreSQL/,
    );
  });
});
