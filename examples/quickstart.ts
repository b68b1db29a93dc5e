// The embedded broker in ten lines: a queue, a message, peek-lock, settle.
import { openBroker } from "mqlite";

const broker = await openBroker(":memory:");
await broker.createQueue("orders", { lockDurationMs: 30_000, maxDeliveryCount: 5 });

await broker.send("orders", {
  body: JSON.stringify({ id: 42 }),
  contentType: "application/json",
  subject: "orders.eu",
});

const [message] = await broker.receive("orders", { waitMs: 1000 });
if (!message) throw new Error("expected a message");
console.log("received", message.seqNumber, message.body.toString());

await broker.complete("orders", message.seqNumber, message.lockToken!);
console.log(await broker.stats("orders"));
await broker.close();
