// biome-ignore-all format: the seed's snippet, as written
// Seed 004, "Pause, resume, unsubscribe", as written (only the import path changed; the queue and
// its two subscribers come from the quick start), then checks of its comments.
import assert from "node:assert/strict";
import { Queue } from "mqlite";

const queue = new Queue({ dbPath: "orders.db" });
queue.subscriber("orders", "sendConfirmationEmail", (_orderId: number) => {}, { subscriptionName: "email" });
queue.subscriber("orders", "trackOrder", (_orderId: number) => {}, { subscriptionName: "analytics" });
await queue.declareSubscriptions();

await queue.pauseSubscription("orders", "email");
await queue.publish("orders", [1]);            // only "analytics" is delivered
await queue.resumeSubscription("orders", "email");

await queue.unsubscribe("orders", "email");    // remove it entirely
await queue.listSubscriptions("orders");       // active subscriptions for a topic
await queue.listTopics();                      // distinct topics with a subscriber

// --- checks -----------------------------------------------------------------------------------
const jobs = await queue.listJobs();
assert.deepEqual(
  jobs.map((j) => j.taskName),
  ["trackOrder"],
  'only "analytics" was delivered',
);
assert.deepEqual(
  (await queue.listSubscriptions("orders")).map((s) => s.subscriptionName),
  ["analytics"],
  '"email" removed entirely',
);
assert.deepEqual(await queue.listTopics(), ["orders"]);
await queue.close();
