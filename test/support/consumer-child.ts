// A consumer process: drains a queue, completing every message, and prints each seq it completed.

import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";

const [path, queue] = process.argv.slice(2) as [string, string];
const broker = await openBroker(path, { background: false, logger: silentLogger });
process.stdout.write("ready\n");
// Wait for the go signal (stdin closes), so every consumer starts on a full queue.
await new Promise<void>((resolve) => {
  process.stdin.resume();
  process.stdin.on("end", () => resolve());
  process.stdin.on("close", () => resolve());
});
let idle = 0;
while (idle < 20) {
  const batch = await broker.receive(queue, { maxMessages: 8 });
  if (batch.length === 0) {
    idle++;
    await new Promise((r) => setTimeout(r, 10));
    continue;
  }
  idle = 0;
  for (const m of batch) {
    await broker.complete(queue, m.seqNumber, m.lockToken!);
    process.stdout.write(`${m.seqNumber}\n`);
  }
}
await broker.close();
