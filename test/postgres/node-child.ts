// A broker node in its own process: it joins the election, reports whether it leads, claims
// `claim` messages of queue "work" (leaving them locked) and then idles until it is killed.
//   argv: <dsn> <schema> <claim>
//   prints: "ready leader=<bool>", then "L <seq>" per message it holds.

import { silentLogger } from "../../src/contract/logger.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";

const [dsn, schema, claim] = process.argv.slice(2) as [string, string, string];
const broker = await PostgresBroker.open(dsn, {
  schema,
  logger: silentLogger,
  leaderPollMs: 200,
  poolSize: 2,
});
const until = Date.now() + 5000;
while (!broker.isLeader && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
process.stdout.write(`ready leader=${broker.isLeader}\n`);
let held = 0;
while (held < Number(claim)) {
  for (const m of await broker.receive("work", { maxMessages: Number(claim) - held, waitMs: 1000 })) {
    process.stdout.write(`L ${m.seqNumber}\n`);
    held++;
  }
}
process.stdout.write("holding\n");
setInterval(() => {}, 1000);
