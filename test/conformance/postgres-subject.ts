import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { PostgresBroker } from "../../src/postgres/postgres-broker.js";
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
    close: async () => {
      await broker.close();
      await dropSchema(schema);
    },
  };
  return subject;
}
