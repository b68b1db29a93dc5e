import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "../../src/client/index.js";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";
import { sqliteOutbox, sqlitePeers, writeSqliteSchemaVersion } from "./sqlite-store.js";
import type { Subject, SubjectOptions } from "./subject.js";

/**
 * The remote client talking to a served embedded broker over loopback: the embedded engine with a
 * manual clock and no background loops (in memory, or on a temporary file with `durable: true`),
 * served on 127.0.0.1 (a free port), reached through `connect()`. Whatever fails here but passes
 * embedded is a wire, server or client bug.
 */
export async function remoteSubject(options: SubjectOptions = {}): Promise<Subject> {
  const clock = new ManualClock();
  const dir = options.durable ? mkdtempSync(join(tmpdir(), "mqlite-remote-")) : undefined;
  const path = dir ? join(dir, "mq.db") : ":memory:";
  let embedded: SqliteBroker;
  let server: RunningServer;
  let client: Broker;
  let running = false;
  const start = async () => {
    embedded = new SqliteBroker(path, {
      clock,
      background: false,
      logger: silentLogger,
      dlqRetention: options.dlqRetention,
      maxMessageBytes: options.maxMessageBytes,
      exclusive: options.exclusive,
    });
    server = await startServer({
      broker: embedded,
      port: 0,
      logger: silentLogger,
      maxMessageBytes: options.maxMessageBytes,
    });
    client = connect(server.url);
    running = true;
  };
  // The client first (it waits for its calls), then the server (which closes the broker).
  const stop = async () => {
    if (!running) return;
    running = false;
    await client.close();
    await server.close();
  };
  await start();
  const peers = dir ? sqlitePeers(path, clock, options.exclusive ?? false) : undefined;
  const subject: Subject = {
    broker: client!,
    clock,
    maintain: async () => {
      await embedded.runMaintenanceOnce();
    },
    close: async () => {
      await peers?.close();
      await stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  if (dir) {
    subject.restart = async () => {
      await stop();
      await start();
      subject.broker = client;
    };
    // The served file itself: a newer schema, another process on it, the outbox of the broker the
    // server runs (a remote client has no transaction of its own).
    subject.restartAtSchemaVersion = async (version) => {
      await stop();
      writeSqliteSchemaVersion(path, version);
      await start();
      subject.broker = client;
    };
    subject.openPeer = peers!.open;
    subject.outbox = sqliteOutbox(() => embedded);
  }
  return subject;
}
