// A topic fans out to filtered subscriptions; each subscription is its own queue.
import { openBroker } from "mqlite";

const broker = await openBroker(":memory:");
await broker.subscribe("events", "audit");
await broker.subscribe("events", "gold-eu", {
  filter: `properties["tier"] == "gold" && subject_parts[1] == "eu"`,
});

const [seq] = await broker.send("events", {
  subject: "orders.eu.created",
  properties: { tier: "gold" },
  body: "{}",
});
console.log("published, last copy has seq", seq);

for (const queue of ["audit", "gold-eu"]) {
  const [m] = await broker.receive(queue);
  console.log(queue, "got", m?.subject);
  if (m) await broker.complete(queue, m.seqNumber, m.lockToken!);
}
// A message no filter accepts is a valid no-op: seq 0.
console.log(await broker.send("events", { subject: "orders.us.created", properties: { tier: "silver" } }));
await broker.close();
