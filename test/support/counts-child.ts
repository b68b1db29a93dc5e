// Runs the random workload until it is killed, printing "step <n>" after each step.
//   argv: <sqlite path | postgres DSN> <seed> [<postgres schema>]
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { createWorkloadQueues, randomStep, rng } from "./random-workload.js";

const [location, seed, schema] = process.argv.slice(2) as [string, string, string | undefined];
const broker = await openBroker(location, {
  logger: silentLogger,
  synchronous: "normal",
  ...(schema !== undefined && { schema }),
});
await createWorkloadQueues(broker);
const random = rng(Number(seed));
for (let n = 0; ; n++) {
  await randomStep(broker, random);
  process.stdout.write(`step ${n}\n`);
}
