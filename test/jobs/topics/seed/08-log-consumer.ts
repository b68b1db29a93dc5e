// biome-ignore-all format: the seed's snippet, as written
// Seed 004, "Managed consumer", as written (only the import path changed; `auditSink` is the
// application's), then checks of its comments.
import assert from "node:assert/strict";
import { Queue } from "mqlite";

const queue = new Queue({ dbPath: "orders.db" });
const written: unknown[] = [];
const auditSink = { write: (value: unknown) => written.push(value) };

queue.logConsumer("orders", "audit-log", (orderId: number) => {
  auditSink.write(orderId);
});

queue.runWorker(); // spawns the consumer's poll loop

// --- checks -----------------------------------------------------------------------------------
await queue.declareSubscriptions();
await queue.publish("orders", [42]);
await queue.publish("orders", [43]);
const deadline = Date.now() + 15_000;
while (written.length < 2) {
  if (Date.now() > deadline) throw new Error(`the consumer saw ${JSON.stringify(written)}`);
  await new Promise((r) => setTimeout(r, 20));
}
assert.deepEqual(written, [42, 43]);
while ((await queue.topicLogStats())[0]?.lag !== 0) {
  if (Date.now() > deadline) throw new Error("the cursor did not advance");
  await new Promise((r) => setTimeout(r, 20));
}
await queue.close();
