// biome-ignore-all format: the seed's snippet, as written
// biome-ignore-all lint/correctness/noUnusedFunctionParameters: the seed's snippet, as written
// Seed 004, "Quick start", as written (only the import path changed), then checks of its comments.
import assert from "node:assert/strict";
import { Queue } from "mqlite";

const queue = new Queue({ dbPath: "orders.db" });

queue.subscriber("orders", "sendConfirmationEmail", (orderId: number) => {
  // ...
}, { subscriptionName: "email" });

queue.subscriber("orders", "trackOrder", (orderId: number) => {
  // ...
}, { subscriptionName: "analytics" });

await queue.declareSubscriptions(); // only needed before runWorker() has started
await queue.publish("orders", [42]); // -> Job[] — one per subscriber

// --- checks -----------------------------------------------------------------------------------
const jobs = await queue.listJobs();
assert.equal(jobs.length, 2, "one job per subscriber");
assert.deepEqual(jobs.map((j) => j.taskName).sort(), ["sendConfirmationEmail", "trackOrder"]);
const again = await queue.publish("orders", [43]);
assert.ok(Array.isArray(again) && again.length === 2 && again.every((j) => j.status === "pending"));
await queue.close();
