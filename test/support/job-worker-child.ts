// A job worker process: runs `work` jobs (sleeping the given ms) and prints what it does:
//   START <jobId> <pid> <attempt>   when a handler starts
//   END <jobId> <pid>               when it returns
//   TICK <jobId> <pid>              for each periodic `tick` job (with `--periodic`)
// `stall` jobs sleep the given ms on their first attempt only (and print START and END likewise).
// `freeze` jobs block the whole process for the given ms on their first attempt: a worker that is
// alive but stuck, renewing nothing. Unlike SIGSTOP it cannot stop inside a commit and hold the
// file's write lock, which would stall every other process too.
// Usage: job-worker-child.ts <dbPath> [--periodic] [--concurrency N] [--remote URL] [--lease-ms N]
import { connect } from "../../src/client/index.js";
import { currentJob, Queue } from "../../src/jobs/index.js";

const [path, ...rest] = process.argv.slice(2) as [string, ...string[]];
const flag = (name: string) => rest.indexOf(name);
const concurrency = flag("--concurrency") >= 0 ? Number(rest[flag("--concurrency") + 1]) : 4;
const remote = flag("--remote") >= 0 ? rest[flag("--remote") + 1] : undefined;
const leaseMs = flag("--lease-ms") >= 0 ? Number(rest[flag("--lease-ms") + 1]) : undefined;
const out = (line: string) => process.stdout.write(`${line}\n`);

const queue = new Queue({
  ...(remote ? { broker: connect(remote) } : { dbPath: path }),
  ...(leaseMs !== undefined && { leaseMs }),
})
  .task("work", async (ms: number) => {
    const { jobId, attempt } = currentJob();
    out(`START ${jobId} ${process.pid} ${attempt}`);
    await new Promise((r) => setTimeout(r, ms));
    out(`END ${jobId} ${process.pid}`);
    return process.pid;
  })
  .task("stall", async (ms: number) => {
    const { jobId, attempt } = currentJob();
    out(`START ${jobId} ${process.pid} ${attempt}`);
    if (attempt === 1) await new Promise((r) => setTimeout(r, ms));
    out(`END ${jobId} ${process.pid}`);
    return process.pid;
  })
  .task("freeze", async (ms: number) => {
    const { jobId, attempt } = currentJob();
    out(`START ${jobId} ${process.pid} ${attempt}`);
    if (attempt === 1) {
      await new Promise((r) => setTimeout(r, 50)); // the claim's turn is over: nothing uncommitted
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    }
    out(`END ${jobId} ${process.pid}`);
    return process.pid;
  })
  .task("tick", () => {
    out(`TICK ${currentJob().jobId} ${process.pid}`);
  });
if (flag("--periodic") >= 0) queue.registerPeriodic("every-second", "tick", "* * * * * *");
queue.runWorker({ concurrency, heartbeatIntervalMs: 200 });
out(`READY ${process.pid}`);
process.on("SIGTERM", () => {
  void queue.close().then(() => process.exit(0));
});
