import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { InternalError, OutcomeUnknownError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { Db } from "../../src/store/postgres/db.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

/** Fails the statement with a SQLSTATE of our choosing. */
const raise = (code: string) => `DO $$ BEGIN RAISE EXCEPTION 'injected' USING ERRCODE = '${code}'; END $$`;

describe("transient failures on PostgreSQL", () => {
  const schema = freshSchema("mqretry");
  let broker: PostgresBroker;
  let db: Db;

  before(async () => {
    broker = await PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger });
    await broker.createQueue("q");
    db = new Db({
      connectionString: PG_DSN,
      schema,
      poolSize: 2,
      maxRetries: 3,
      applicationName: "mqlite-test",
    });
  });
  after(async () => {
    await broker.close();
    await db.close();
    await dropSchema(schema);
  });

  it("a transaction whose connection is killed before COMMIT is retried, and applies once", async () => {
    let attempts = 0;
    const [seq] = await broker.tx(async (t) => {
      attempts++;
      const seqs = await t.send("q", { body: "once" });
      if (attempts === 1) await t.query("SELECT pg_terminate_backend(pg_backend_pid())");
      return seqs;
    });
    assert.equal(attempts, 2);
    const stored = await broker.peek("q");
    assert.deepEqual(
      stored.map((m) => [m.seqNumber, m.body.toString()]),
      [[seq, "once"]],
    );
    await broker.receive("q", { mode: "receive-and-delete" });
  });

  for (const [what, code] of [
    ["serialization failure", "40001"],
    ["deadlock", "40P01"],
  ] as const) {
    it(`a ${what} rolls the transaction back and is retried`, async () => {
      let attempts = 0;
      await broker.tx(async (t) => {
        attempts++;
        await t.send("q", { body: what });
        if (attempts < 3) await t.query(raise(code));
      });
      assert.equal(attempts, 3);
      const stored = await broker.receive("q", { mode: "receive-and-delete", maxMessages: 10 });
      assert.deepEqual(
        stored.map((m) => m.body.toString()),
        [what],
      );
    });
  }

  it("an error that is not transient is not retried", async () => {
    let attempts = 0;
    await assert.rejects(
      broker.tx(async (t) => {
        attempts++;
        await t.query(raise("22012"));
      }),
      InternalError,
    );
    assert.equal(attempts, 1);
  });

  it("a transient failure that persists gives up after the retries", async () => {
    let attempts = 0;
    await assert.rejects(
      db.tx(async (c) => {
        attempts++;
        await c.q(raise("40001"));
      }),
      InternalError,
    );
    assert.equal(attempts, 4);
  });

  it("a single-statement write whose connection breaks after it was sent is outcome_unknown", async () => {
    let attempts = 0;
    await assert.rejects(
      db.one(async (c) => {
        attempts++;
        await c.q("SELECT pg_terminate_backend(pg_backend_pid())");
      }),
      (err: unknown) =>
        err instanceof OutcomeUnknownError && err.code === "outcome_unknown" && err.status === 503,
    );
    assert.equal(attempts, 1, "never retried: it may have applied");
  });

  it("a read is retried after its connection broke", async () => {
    let attempts = 0;
    const rows = await db.read(async (c) => {
      attempts++;
      if (attempts === 1) await c.q("SELECT pg_terminate_backend(pg_backend_pid())");
      return c.q<{ one: number }>("SELECT 1 AS one");
    });
    assert.equal(attempts, 2);
    assert.deepEqual(rows, [{ one: 1 }]);
  });
});
