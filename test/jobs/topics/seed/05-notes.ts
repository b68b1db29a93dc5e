// @ts-nocheck -- the seed's snippet indexes a list (`job.notes`), which this repository's
// noUncheckedIndexedAccess refuses; it runs as written.
// biome-ignore-all format: the seed's snippet, as written
// Seed 004, "Every delivery is stamped with topic and subscription", as written (only the import path
// changed; the queue and its two subscribers come from the quick start), then checks of its comments.
import assert from "node:assert/strict";
import { Queue } from "mqlite";

const queue = new Queue({ dbPath: "orders.db" });
queue.subscriber("orders", "sendConfirmationEmail", (_orderId: number) => {}, { subscriptionName: "email" });
queue.subscriber("orders", "trackOrder", (_orderId: number) => {}, { subscriptionName: "analytics" });
await queue.declareSubscriptions();

const [job] = await queue.publish("orders", [5], { notes: { tenant: "acme" } });
JSON.parse(job.notes ?? "{}");
// { topic: "orders", subscription: "email", tenant: "acme" }

// --- checks -----------------------------------------------------------------------------------
assert.deepEqual(JSON.parse(job.notes ?? "{}"), { topic: "orders", subscription: "email", tenant: "acme" });
const listed = await queue.listJobs({ task: "trackOrder" });
assert.deepEqual(JSON.parse(listed[0].notes), { topic: "orders", subscription: "analytics", tenant: "acme" });
await queue.close();
