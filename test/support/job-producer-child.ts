// A producer or worker process of the job face, for tests of what processes sharing a store see:
//   debounce <userId>             enqueues a debounced `report` job, prints ID <id>
//   enqueue <queue> <maxPending>  enqueues a `noop` job under a maxPending cap, prints ID <id> or FULL <pending> <cap>
//   work <queue> <n>              runs a worker until n `ok` jobs completed, stores its counts, prints DONE
// Usage: job-producer-child.ts <dbPath | postgres DSN> <schema | -> <command> [args…]
import { Queue, QueueFullError } from "../../src/jobs/index.js";

const [location, schema, command, ...args] = process.argv.slice(2) as [string, string, string, ...string[]];
const out = (line: string) => process.stdout.write(`${line}\n`);
let completed = 0;
const queue = new Queue(schema === "-" ? { dbPath: location } : { dsn: location, schema })
  .task("report", (_change: { userId: string }) => {}, {
    debounce: "1m",
    debounceKey: "report:{userId}",
    debounceMaxWait: "1h",
  })
  .task("noop", () => {})
  .task("ok", () => {
    completed++;
  });

if (command === "debounce") {
  out(`ID ${await queue.enqueue("report", [{ userId: args[0]! }])}`);
} else if (command === "enqueue") {
  queue.configureQueue(args[0]!, { maxPending: Number(args[1]) });
  try {
    out(`ID ${await queue.enqueue("noop", [], { queue: args[0]! })}`);
  } catch (err) {
    if (!(err instanceof QueueFullError)) throw err;
    out(`FULL ${err.pending} ${err.cap}`);
  }
} else if (command === "work") {
  queue.runWorker({ queues: [args[0]!] });
  while (completed < Number(args[1])) await new Promise((r) => setTimeout(r, 20));
  await queue.shutdown();
  out("DONE");
} else {
  throw new Error(`unknown command ${command}`);
}
await queue.close();
