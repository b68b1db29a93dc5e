import Database from "better-sqlite3";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import type { Clock } from "../../src/core/clock.js";
import { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";
import type { Outbox } from "./subject.js";

/** Writes `version` as the newest schema version of the SQLite file at `path` (the broker closed). */
export function writeSqliteSchemaVersion(path: string, version: number): void {
  const db = new Database(path);
  try {
    db.prepare("INSERT INTO schema_version (version, name, applied_at) VALUES (?, 'future', 0)").run(version);
  } finally {
    db.close();
  }
}

/**
 * Opens other brokers on the SQLite file at `path`, as another process of the same deployment would
 * (the same clock, the same `exclusive` choice); `close` closes them.
 */
export function sqlitePeers(
  path: string,
  clock: Clock,
  exclusive: boolean,
): { open(): Promise<Broker>; close(): Promise<void> } {
  const opened: SqliteBroker[] = [];
  return {
    open: async () => {
      const b = new SqliteBroker(path, { clock, exclusive, background: false, logger: silentLogger });
      opened.push(b);
      return b;
    },
    close: async () => {
      for (const b of opened.splice(0)) await b.close();
    },
  };
}

/** The transactional outbox of a SQLite broker (`tx`, synchronous inside). */
export function sqliteOutbox(broker: () => SqliteBroker): Outbox {
  return {
    setup: () =>
      broker().tx((t) => {
        t.db.prepare("CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY)").run();
      }),
    place: (id, queue, body, fail) =>
      broker().tx((t) => {
        t.db.prepare("INSERT INTO orders (id) VALUES (?)").run(id);
        t.send(queue, { body });
        if (fail) throw new Error("the order is refused after its message was sent");
      }),
    count: (id) =>
      broker().tx(
        (t) => (t.db.prepare("SELECT count(*) AS n FROM orders WHERE id = ?").get(id) as { n: number }).n,
      ),
  };
}
