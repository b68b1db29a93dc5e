// Dead letters are a state of the same queue: inspect with peek, send back with redrive, delete with purge.
import { openBroker } from "mqlite";

const broker = await openBroker(":memory:");
await broker.createQueue("jobs", { maxDeliveryCount: 2 });
await broker.send("jobs", { body: "flaky" });

for (let attempt = 1; attempt <= 2; attempt++) {
  const [m] = await broker.receive("jobs");
  await broker.abandon("jobs", m!.seqNumber, m!.lockToken!); // the 2nd abandon dead-letters it
}
const [dead] = await broker.peek("jobs", { state: "dead_lettered" });
console.log(dead?.deadLetterReason); // MaxDeliveryCountExceeded

console.log("redriven:", await broker.redrive("jobs"));
const [again] = await broker.receive("jobs");
await broker.reject("jobs", again!.seqNumber, again!.lockToken!, {
  reason: "BadInput",
  description: "cannot parse",
});
console.log("purged:", await broker.purge("jobs"));
await broker.close();
