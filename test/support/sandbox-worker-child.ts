// A worker process whose sandboxed job loops for ever; once the loop runs, the process ends
// (`exit`: process.exit, `throw`: an uncaught error). Prints `SANDBOX <pid>` first.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Queue } from "../../src/jobs/index.js";
import { eventually } from "./eventually.js";

const [path, mode] = process.argv.slice(2);
const handlers = join(dirname(fileURLToPath(import.meta.url)), "../fixtures/sandbox/handlers.ts");
const queue = new Queue({ dbPath: path! }).task("spin", { file: handlers, export: "spin" });
queue.runWorker();
const id = await queue.enqueue("spin", []);
const line = await eventually(async () => (await queue.getJobLogs(id)).logs[0], 20_000, "the pid line");
console.log(`SANDBOX ${String(line).replace("pid ", "")}`);
if (mode === "throw") {
  setTimeout(() => {
    throw new Error("the worker crashed");
  }, 10);
} else {
  process.exit(0);
}
