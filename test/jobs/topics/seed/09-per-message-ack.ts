// biome-ignore-all format: the seed's snippet, as written
// Seed 004, "Per-message ack", as written (only the import path changed; `auditSink` is the
// application's and fails once on 2), then checks of its comments.
import assert from "node:assert/strict";
import { Queue } from "mqlite";

const queue = new Queue({ dbPath: "orders.db" });
const written: unknown[] = [];
let failed = false;
const auditSink = {
  write: (args: unknown[]) => {
    if (args[0] === 2 && !failed) {
      failed = true;
      throw new Error("transient");
    }
    written.push(args);
  },
};
await queue.subscribeLog("orders", "audit-log");
for (const n of [1, 2, 3]) await queue.publish("orders", [n]);

for (const msg of await queue.leaseTopic("orders", "audit-log", { visibility: 30 })) {
  try {
    auditSink.write(msg.args);
    await queue.ackMessage("orders", "audit-log", msg.id);
  } catch {
    await queue.nackMessage("orders", "audit-log", msg.id); // redeliver now
  }
}

// --- checks -----------------------------------------------------------------------------------
assert.deepEqual(written, [[1], [3]], "a failure does not block its siblings");
const again = await queue.leaseTopic("orders", "audit-log", { visibility: 30 });
assert.deepEqual(
  again.map((m) => m.args),
  [[2]],
  "the nacked message is redelivered now; acked ones never",
);
await queue.close();
