import Database from "better-sqlite3";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { tempDir } from "../support/temp.js";

/**
 * A broker on a file whose queue `q` (empty) it has cached by a send, and `changeConfig`, which
 * changes that queue's config (a 60 s default TTL) from another connection: a send made before it
 * finds its cached row stale in its transaction.
 */
export async function staleQueueRow(): Promise<{
  b: Broker;
  changeConfig(): void;
  close(): Promise<void>;
}> {
  const tmp = tempDir();
  const file = tmp.file("stale.db");
  const b = await openBroker(file, { background: false, logger: silentLogger });
  await b.createQueue("q");
  await b.send("q", { body: "caches the queue's row" });
  await b.receive("q", { mode: "receive-and-delete" });
  const other = new Database(file);
  return {
    b,
    changeConfig: () => {
      other.prepare("UPDATE queues SET default_ttl_ms = 60000 WHERE name = 'q'").run();
    },
    close: async () => {
      other.close();
      await b.close();
      tmp.cleanup();
    },
  };
}
