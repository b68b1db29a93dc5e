import pg from "pg";
import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { dropSchema, freshSchema, PG_DSN } from "../postgres/pg.js";
import type { Subject, SubjectOptions } from "./subject.js";

/**
 * The PostgreSQL engine with a manual clock and no background loops, in a fresh schema of the test
 * server per subject (dropped at close). The database always outlives the broker, so `restart()`
 * is always offered.
 */
export async function postgresSubject(options: SubjectOptions = {}): Promise<Subject> {
  const clock = new ManualClock();
  const schema = freshSchema();
  const open = () =>
    PostgresBroker.open(PG_DSN, {
      clock,
      schema,
      background: false,
      logger: silentLogger,
      poolSize: 4,
      dlqRetention: options.dlqRetention,
      maxMessageBytes: options.maxMessageBytes,
    });
  let broker = await open();
  const peers: PostgresBroker[] = [];
  const table = `"${schema}".orders`;
  const subject: Subject = {
    broker,
    clock,
    maintain: async () => {
      await broker.runMaintenanceOnce();
    },
    restart: async () => {
      await broker.close();
      broker = await open();
      subject.broker = broker;
    },
    restartAtSchemaVersion: async (version) => {
      await broker.close();
      const client = new pg.Client({ connectionString: PG_DSN });
      await client.connect();
      try {
        await client.query(
          `INSERT INTO "${schema}".schema_version (version, name, applied_at) VALUES ($1, 'future', 0)`,
          [version],
        );
      } finally {
        await client.end();
      }
      broker = await open();
      subject.broker = broker;
    },
    openPeer: async () => {
      const peer = await open();
      peers.push(peer);
      return peer;
    },
    outbox: {
      setup: () =>
        broker.tx(async (t) => {
          await t.query(`CREATE TABLE IF NOT EXISTS ${table} (id text PRIMARY KEY)`);
        }),
      place: (id, queue, body, fail) =>
        broker.tx(async (t) => {
          await t.query(`INSERT INTO ${table} (id) VALUES ($1)`, [id]);
          await t.send(queue, { body });
          if (fail) throw new Error("the order is refused after its message was sent");
        }),
      count: (id) =>
        broker.tx(async (t) => {
          const rows = await t.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE id = $1`, [
            id,
          ]);
          return rows[0]!.n;
        }),
    },
    close: async () => {
      for (const peer of peers.splice(0)) await peer.close();
      await broker.close();
      await dropSchema(schema);
    },
  };
  return subject;
}
