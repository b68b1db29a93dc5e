import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "../../src/client/index.js";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { SqliteBroker } from "../../src/engine/sqlite-broker.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
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
  const start = async () => {
    embedded = new SqliteBroker(path, {
      clock,
      background: false,
      logger: silentLogger,
      dlqRetention: options.dlqRetention,
      maxMessageBytes: options.maxMessageBytes,
    });
    server = await startServer({
      broker: embedded,
      port: 0,
      logger: silentLogger,
      maxMessageBytes: options.maxMessageBytes,
    });
    client = connect(server.url);
  };
  // The client first (it waits for its calls), then the server (which closes the broker).
  const stop = async () => {
    await client.close();
    await server.close();
  };
  await start();
  const subject: Subject = {
    broker: client!,
    clock,
    maintain: async () => {
      await embedded.runMaintenanceOnce();
    },
    close: async () => {
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
  }
  return subject;
}
