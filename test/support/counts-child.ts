// Runs the random workload on a file until it is killed, printing "step <n>" after each step.
import { silentLogger } from "../../src/engine/logger.js";
import { openBroker } from "../../src/engine/open.js";
import { createWorkloadQueues, randomStep, rng } from "./random-workload.js";

const [path, seed] = process.argv.slice(2) as [string, string];
const broker = await openBroker(path, { logger: silentLogger, synchronous: "normal" });
await createWorkloadQueues(broker);
const random = rng(Number(seed));
for (let n = 0; ; n++) {
  await randomStep(broker, random);
  process.stdout.write(`step ${n}\n`);
}
