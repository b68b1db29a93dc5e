// PostgreSQL's kept per-queue counts (deltas per statement, folded by the maintenance loop) equal a
// full count of the messages after a random workload, folded or not, and after the process
// running it is killed mid-way.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import pg from "pg";
import { silentLogger } from "../../src/contract/logger.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { collectLines, spawnChild } from "../support/child.js";
import { createWorkloadQueues, randomStep, rng, WORKLOAD_QUEUES } from "../support/random-workload.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

async function fullCount(schema: string, queue: string): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: PG_DSN });
  await c.connect();
  try {
    const counted: Record<string, number> = {};
    const { rows } = await c.query<{ state: string; n: number }>(
      `SELECT state, count(*)::int AS n FROM "${schema}".messages WHERE queue = $1 GROUP BY state`,
      [queue],
    );
    for (const r of rows) counted[r.state] = r.n;
    const backing = await c.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${schema}".messages WHERE queue = $1 AND state = 'scheduled' AND delivery_count > 0`,
      [queue],
    );
    counted.backing_off = backing.rows[0]!.n;
    return counted;
  } finally {
    await c.end();
  }
}

/** Folded count rows that are not zero. */
async function folded(schema: string): Promise<number> {
  const c = new pg.Client({ connectionString: PG_DSN });
  await c.connect();
  try {
    const { rows } = await c.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${schema}".queue_counts WHERE n <> 0`,
    );
    return rows[0]!.n;
  } finally {
    await c.end();
  }
}

async function assertCountsMatch(broker: PostgresBroker, schema: string): Promise<number> {
  let total = 0;
  for (const q of WORKLOAD_QUEUES) {
    const s = await broker.stats(q);
    const kept: Record<string, number> = { backing_off: s.backingOff };
    for (const [state, n] of [
      ["active", s.active],
      ["locked", s.locked],
      ["deferred", s.deferred],
      ["scheduled", s.scheduled],
      ["completed", s.completed],
      ["cancelled", s.cancelled],
      ["dead_lettered", s.deadLettered],
    ] as const) {
      if (n !== 0) kept[state] = n;
    }
    assert.deepEqual(kept, await fullCount(schema, q), `queue ${q}`);
    total += s.total;
  }
  return total;
}

describe("PostgreSQL: kept queue counts", () => {
  const schemas: string[] = [];
  const fresh = () => {
    const s = freshSchema("mqcounts");
    schemas.push(s);
    return s;
  };
  after(async () => {
    for (const s of schemas) await dropSchema(s);
  });

  it("equal a full count after a random workload, before and after the deltas are folded", async () => {
    const schema = fresh();
    const broker = await PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger });
    try {
      await createWorkloadQueues(broker);
      const random = rng(7);
      for (let i = 0; i < 600; i++) await randomStep(broker, random);
      assert.ok((await assertCountsMatch(broker, schema)) > 0, "the workload left messages to count");
      assert.equal(await folded(schema), 0, "nothing folded before a maintenance pass");
      await broker.runMaintenanceOnce();
      assert.ok((await folded(schema)) > 0, "the maintenance pass folded the deltas");
      await assertCountsMatch(broker, schema);
    } finally {
      await broker.close();
    }
  });

  it("equal a full count after the process running the workload is killed (SIGKILL)", async () => {
    const schema = fresh();
    const child = spawnChild("counts-child.ts", [PG_DSN, "3", schema]);
    let steps = 0;
    const done = collectLines(child, () => {
      if (++steps === 300) child.kill("SIGKILL");
    });
    const { signal, stderr } = await done;
    assert.equal(signal, "SIGKILL", stderr);
    const broker = await PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger });
    try {
      await assertCountsMatch(broker, schema);
      await broker.runMaintenanceOnce();
      await assertCountsMatch(broker, schema);
    } finally {
      await broker.close();
    }
  });
});
