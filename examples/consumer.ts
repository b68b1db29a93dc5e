// A consumer loop: handlers run with a concurrency limit, completed on success, abandoned on a throw,
// dead-lettered on a DeadLetterError; leases of running handlers are renewed.
import { DeadLetterError, openBroker } from "mqlite";

const broker = await openBroker(":memory:");
await broker.createQueue("orders", { maxDeliveryCount: 3 });
await broker.send("orders", [{ body: "42" }, { body: "not a number" }, { body: "7" }]);

let total = 0;
const consumer = broker.consume(
  "orders",
  async (message) => {
    const amount = Number(message.body.toString());
    if (Number.isNaN(amount)) throw new DeadLetterError("BadInput", "the body is not a number");
    total += amount; // resolving completes the message
  },
  { concurrency: 4, waitMs: 200 },
);

while ((await broker.stats("orders")).active + (await broker.stats("orders")).locked > 0) {
  await new Promise((r) => setTimeout(r, 20));
}
await consumer.stop(); // running handlers finish; prefetched messages are released
console.log("total:", total); // total: 49
const [dead] = await broker.peek("orders", { state: "dead_lettered" });
console.log(dead?.deadLetterReason, "-", dead?.deadLetterDescription); // BadInput - the body is not a number
await broker.close();
