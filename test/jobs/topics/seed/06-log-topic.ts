// biome-ignore-all format: the seed's snippet, as written
// Seed 004, "Log topics", as written (only the import path changed; `auditSink` is the application's),
// then checks of its comments.
import assert from "node:assert/strict";
import { Queue } from "mqlite";

const queue = new Queue({ dbPath: "orders.db" });
const written: unknown[] = [];
const auditSink = { write: (value: unknown) => written.push(value) };

await queue.subscribeLog("orders", "audit-log");

await queue.publish("orders", [42]); // -> [] no fan-out jobs; one message stored

for (const msg of await queue.readTopic("orders", "audit-log")) {
  auditSink.write(msg.args);
  await queue.ackTopic("orders", "audit-log", msg.id);
}

// --- checks -----------------------------------------------------------------------------------
assert.deepEqual(await queue.publish("orders", [43]), [], "no fan-out jobs");
assert.deepEqual(written, [[42]]);
assert.deepEqual(
  (await queue.readTopic("orders", "audit-log")).map((m) => m.args),
  [[43]],
  "the cursor moved past 42; one message stored per publish",
);
assert.equal((await queue.listJobs()).length, 0);
await queue.close();
