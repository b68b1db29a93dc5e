// biome-ignore-all format: the seed's snippet, as written
// Seed 004, "Durable vs. ephemeral", as written (only the import path changed; the queue comes
// from the quick start), then checks of its comments.
import assert from "node:assert/strict";
import { Queue } from "mqlite";

const queue = new Queue({ dbPath: "orders.db" });
const printed: string[] = [];
const log = console.log;
console.log = (...args: unknown[]) => {
  printed.push(args.join(" "));
};

queue.subscriber("orders", "tail", (orderId: number) => {
  console.log(`order ${orderId}`);
}, { durable: false });

queue.runWorker(); // the subscription registers here, owned by this worker

// --- checks -----------------------------------------------------------------------------------
const deadline = Date.now() + 10_000;
while ((await queue.listSubscriptions("orders")).length === 0) {
  if (Date.now() > deadline) throw new Error("the worker did not register the subscription");
  await new Promise((r) => setTimeout(r, 20));
}
const [sub] = await queue.listSubscriptions("orders");
assert.equal(sub?.subscriptionName, "tail");
assert.equal(sub?.durable, false, "ephemeral");
const [worker] = await queue.listWorkers();
const row = (await (await queue.broker()).listSubscriptions()).find((s) => s.name === "tail");
assert.equal(row?.owner, worker?.workerId, "owned by this worker");
await queue.publish("orders", [7]);
while (!printed.includes("order 7")) {
  if (Date.now() > deadline) throw new Error("the handler did not run");
  await new Promise((r) => setTimeout(r, 20));
}
await queue.close();
console.log = log;
