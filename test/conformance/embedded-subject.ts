import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";
import { sqliteOutbox, sqlitePeers, writeSqliteSchemaVersion } from "./sqlite-store.js";
import type { Subject, SubjectOptions } from "./subject.js";

/**
 * The embedded engine with a manual clock and no background loops: on an in-memory database, or
 * (`durable: true`) on a file in a fresh temporary directory, which `restart()` reopens.
 */
export async function embeddedSubject(options: SubjectOptions = {}): Promise<Subject> {
  const clock = new ManualClock();
  const dir = options.durable ? mkdtempSync(join(tmpdir(), "mqlite-conformance-")) : undefined;
  const path = dir ? join(dir, "mq.db") : ":memory:";
  const open = () =>
    new SqliteBroker(path, {
      clock,
      background: false,
      logger: silentLogger,
      dlqRetention: options.dlqRetention,
      maxMessageBytes: options.maxMessageBytes,
      exclusive: options.exclusive,
    });
  let broker: SqliteBroker = await open();
  const peers = dir ? sqlitePeers(path, clock, options.exclusive ?? false) : undefined;
  const subject: Subject = {
    broker,
    clock,
    maintain: async () => {
      await broker.runMaintenanceOnce();
    },
    close: async () => {
      await peers?.close();
      await broker.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  if (dir) {
    subject.restart = async () => {
      await broker.close();
      broker = await open();
      subject.broker = broker;
    };
    subject.restartAtSchemaVersion = async (version) => {
      await broker.close();
      writeSqliteSchemaVersion(path, version);
      broker = await open();
      subject.broker = broker;
    };
    subject.openPeer = peers!.open;
    subject.outbox = sqliteOutbox(() => broker);
  }
  return subject;
}
