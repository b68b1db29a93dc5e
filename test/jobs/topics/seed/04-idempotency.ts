// biome-ignore-all format: the seed's snippet, as written
// biome-ignore-all lint/correctness/noUnusedFunctionParameters: the seed's snippet, as written
// Seed 004, "Idempotency-key dedup is per subscriber", as written (only the import path changed; the
// queue and its two subscribers come from the quick start), then checks of its comments.
import assert from "node:assert/strict";
import { Queue } from "mqlite";

const queue = new Queue({ dbPath: "orders.db" });
queue.subscriber("orders", "sendConfirmationEmail", (_orderId: number) => {}, { subscriptionName: "email" });
queue.subscriber("orders", "trackOrder", (_orderId: number) => {}, { subscriptionName: "analytics" });
await queue.declareSubscriptions();

const first = await queue.publish("orders", [1], { idempotencyKey: "evt-42" });  // 2 jobs
const second = await queue.publish("orders", [1], { idempotencyKey: "evt-42" }); // same jobs

queue.subscriber("orders", "auditOrder", (orderId: number) => {}, { subscriptionName: "audit" });
await queue.declareSubscriptions();

const third = await queue.publish("orders", [1], { idempotencyKey: "evt-42" }); // "audit" delivered

// --- checks -----------------------------------------------------------------------------------
assert.equal(first.length, 2, "2 jobs");
assert.deepEqual(
  second.map((j) => j.id),
  first.map((j) => j.id),
  "same jobs",
);
assert.equal(third.length, 3);
const fresh = third.filter((j) => !first.some((f) => f.id === j.id));
assert.deepEqual(
  fresh.map((j) => j.taskName),
  ["auditOrder"],
  '"audit" gets its own delivery',
);
assert.equal((await queue.listJobs()).length, 3, "no other new rows");
await queue.close();
