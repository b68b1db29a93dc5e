import { connect } from "../../src/client/index.js";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { startServer } from "../../src/server/index.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "../postgres/pg.js";
import { tempDir } from "../support/temp.js";

/**
 * One broker the job face runs on, with the real clock and its background loops: what a user
 * gets. `second()` opens another broker on the same store (another process would): another
 * connection to the file, another client of the served broker, another PostgreSQL node.
 */
export interface JobBroker {
  broker: Broker;
  second(): Promise<Broker>;
  close(): Promise<void>;
}

export interface JobBrokerSubject {
  name: "embedded" | "remote" | "postgres";
  open(): Promise<JobBroker>;
}

/** The three broker kinds every job-face feature is tested on: embedded SQLite, remote, PostgreSQL. */
export const JOB_BROKER_SUBJECTS: readonly JobBrokerSubject[] = [
  {
    name: "embedded",
    async open() {
      const tmp = tempDir("mqlite-jobsub-");
      const path = tmp.file("jobs.db");
      const opened: Broker[] = [];
      const broker = await openBroker(path, { logger: silentLogger });
      opened.push(broker);
      return {
        broker,
        second: async () => {
          const b = await openBroker(path, { logger: silentLogger });
          opened.push(b);
          return b;
        },
        close: async () => {
          for (const b of opened) await b.close();
          tmp.cleanup();
        },
      };
    },
  },
  {
    name: "remote",
    async open() {
      const tmp = tempDir("mqlite-jobsub-");
      const embedded = await openBroker(tmp.file("served.db"), { logger: silentLogger });
      const server = await startServer({ broker: embedded, port: 0, logger: silentLogger });
      const clients = [connect(server.url)];
      return {
        broker: clients[0]!,
        second: async () => {
          const c = connect(server.url);
          clients.push(c);
          return c;
        },
        close: async () => {
          for (const c of clients) await c.close();
          await server.close();
          tmp.cleanup();
        },
      };
    },
  },
  {
    name: "postgres",
    async open() {
      await requirePostgres();
      const schema = freshSchema("mqflow");
      const nodes = [await PostgresBroker.open(PG_DSN, { schema, logger: silentLogger, poolSize: 4 })];
      return {
        broker: nodes[0]!,
        second: async () => {
          const n = await PostgresBroker.open(PG_DSN, { schema, logger: silentLogger, poolSize: 4 });
          nodes.push(n);
          return n;
        },
        close: async () => {
          for (const n of nodes) await n.close();
          await dropSchema(schema);
        },
      };
    },
  },
];
