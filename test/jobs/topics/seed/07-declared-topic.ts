// biome-ignore-all format: the seed's snippet, as written
// Seed 004, "Declared topics", as written (only the import path changed), then checks of its comments.
import assert from "node:assert/strict";
import { Queue } from "mqlite";

const queue = new Queue({ dbPath: "orders.db" });

await queue.declareTopic("orders", { retention: 3600 }); // seconds

await queue.publish("orders", [42]); // retained even with no subscriber yet
await queue.subscribeLog("orders", "audit-log");
await queue.readTopic("orders", "audit-log"); // -> sees the earlier publish

// --- checks -----------------------------------------------------------------------------------
const seen = await queue.readTopic("orders", "audit-log");
assert.deepEqual(
  seen.map((m) => m.args),
  [[42]],
  "sees the earlier publish",
);
const [declared] = await queue.listDeclaredTopics();
assert.equal(declared?.retentionMs, 3_600_000, "3600 seconds");
await queue.declareTopic("orders", { retention: 3600 }); // idempotent
assert.equal((await queue.listDeclaredTopics()).length, 1);
await queue.close();
