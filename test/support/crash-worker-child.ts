// A job worker connected to a served broker by URL, for the crash loop. It outlives every restart
// of the server (its claims fail and are retried while the server is down) and prints one line per
// handler run:  RAN <task> <key> <jobId> <attempt>
// Tasks: `job` (enqueued), `topic-job` (a task subscription of the topic `jt`, fed by publishes).
// Usage: crash-worker-child.ts <url> <token>
import { connect } from "../../src/client/index.js";
import { currentJob, Queue } from "../../src/jobs/index.js";

const [url, token] = process.argv.slice(2) as [string, string];
const out = (line: string) => process.stdout.write(`${line}\n`);
const broker = connect(url, { token });

const run = (task: string) => async (key: string) => {
  const { jobId, attempt } = currentJob();
  out(`RAN ${task} ${key} ${jobId} ${attempt}`);
  await new Promise((r) => setTimeout(r, 5 + Math.floor(Math.random() * 20)));
  return key;
};

const queue = new Queue({ broker })
  .task("job", run("job"), { timeoutMs: 2000, maxRetries: 100 })
  .subscriber("jt", "topic-job", run("topic-job"), { timeoutMs: 2000, maxRetries: 100 });
queue.runWorker({ concurrency: 4, heartbeatIntervalMs: 250 });
out(`READY ${process.pid}`);
process.on("SIGTERM", () => {
  void queue.close().then(() => process.exit(0));
});
