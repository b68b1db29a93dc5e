// /readyz on the PostgreSQL engine, against the real server: ready, then `db_unavailable` while the
// broker's role gets read-only sessions and while it cannot log in at all, ready again after, and
// `closing` once the broker is closed; a server that never answers is `db_unavailable` after the
// probe's timeout; a write that met a full disk is `storage_full`.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer, type Socket } from "node:net";
import { after, describe, it } from "node:test";
import pg from "pg";
import { StorageFullError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { startServer } from "../../src/server/index.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { pgReadiness } from "../../src/store/postgres/readiness.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

const TOKEN = "readiness-token";

/** Runs statements as the server's superuser (the tests' DSN). */
async function admin(...statements: string[]): Promise<void> {
  const c = new pg.Client({ connectionString: PG_DSN });
  await c.connect();
  try {
    for (const s of statements) await c.query(s);
  } finally {
    await c.end();
  }
}

const role = `mqt_ready_${randomBytes(4).toString("hex")}`;
const schema = freshSchema();
const kick = `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}'`;

after(async () => {
  await dropSchema(schema);
  await admin(kick, `DROP OWNED BY ${role}`, `DROP ROLE IF EXISTS ${role}`);
});

async function readyz(url: string): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(`${url}/readyz`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

describe("PostgreSQL /readyz", () => {
  it("says db_unavailable while sessions are read-only and while the role cannot connect, ready again after, closing once closed", async () => {
    await admin(`CREATE ROLE ${role} LOGIN`, `GRANT CREATE ON DATABASE postgres TO ${role}`);
    const dsn = new URL(PG_DSN);
    dsn.username = role;
    const broker = await PostgresBroker.open(dsn.href, { schema, background: false, logger: silentLogger });
    const server = await startServer({
      broker,
      port: 0,
      tokens: [TOKEN],
      logger: silentLogger,
      closeBroker: false,
    });
    try {
      assert.deepEqual(await readyz(server.url), { status: 200, body: { status: "ready" } });

      await admin(`ALTER ROLE ${role} SET default_transaction_read_only = on`, kick);
      const readOnly = await readyz(server.url);
      assert.equal(readOnly.status, 503);
      assert.equal(readOnly.body.reason, "db_unavailable");
      assert.match(readOnly.body.message ?? "", /read-only/);
      const open = await fetch(`${server.url}/readyz`);
      assert.deepEqual(
        await open.json(),
        { status: "not_ready", reason: "db_unavailable" },
        "no details without a token",
      );

      await admin(
        `ALTER ROLE ${role} RESET default_transaction_read_only`,
        `ALTER ROLE ${role} NOLOGIN`,
        kick,
      );
      const down = await readyz(server.url);
      assert.equal(down.status, 503);
      assert.equal(down.body.reason, "db_unavailable");
      assert.match(down.body.message ?? "", /not permitted to log in/);

      await admin(`ALTER ROLE ${role} LOGIN`);
      assert.deepEqual(await readyz(server.url), { status: 200, body: { status: "ready" } });
      await broker.createQueue("q");
      assert.deepEqual(await broker.send("q", { body: "still writes" }), [1]);

      await broker.close();
      const closing = await readyz(server.url);
      assert.equal(closing.status, 503);
      assert.equal(closing.body.reason, "closing");
    } finally {
      await server.close();
      await broker.close();
    }
  });

  it("says db_unavailable when the server does not answer within the timeout", async () => {
    // Accepts connections and never answers (a hung server, a black-holed network).
    const sockets: Socket[] = [];
    const silent = createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as { port: number }).port;
    const pool = new pg.Pool({ connectionString: `postgres://x@127.0.0.1:${port}/x`, max: 1 });
    pool.on("error", () => undefined);
    try {
      const started = performance.now();
      const r = await pgReadiness(pool, undefined, 300);
      assert.equal(r.ready, false);
      assert.equal(r.reason, "db_unavailable");
      assert.match(r.message ?? "", /did not answer within 300 ms/);
      assert.ok(performance.now() - started < 5000, "the probe gives up at its timeout, not the pool's");
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
      await pool.end();
    }
  });

  it("says storage_full after a write met a full disk, without asking the server", async () => {
    const pool = new pg.Pool({ connectionString: PG_DSN, max: 1 });
    try {
      const full = new StorageFullError("mqlite: the database server is out of disk space: no space left");
      assert.deepEqual(await pgReadiness(pool, full), {
        ready: false,
        reason: "storage_full",
        message: full.message,
      });
      assert.deepEqual(await pgReadiness(pool, undefined), { ready: true });
    } finally {
      await pool.end();
    }
  });
});
