// The job face: tasks, a worker, results, retries with backoff, the dead-letter queue, events.
import { currentJob, JobFailedError, Queue } from "mqlite";

const queue = new Queue({ dbPath: ":memory:" })
  .task("resize", async (url: string, width: number) => {
    await currentJob().setProgress(50);
    return { url, width, bytes: width * 10 };
  })
  .task(
    "charge",
    (_amount: number) => {
      throw new Error("card declined");
    },
    { maxRetries: 2, retryBackoff: { baseMs: 10, maxMs: 100 } },
  );

queue.on("job.retrying", (e) => console.log("retrying", e.jobId, e.error));
queue.use({ before: (ctx) => console.log("attempt", ctx.attempt, "of", ctx.taskName) });

const worker = queue.runWorker({ concurrency: 4 });

const id = await queue.enqueue("resize", ["https://example.com/a.png", 320], { priority: 5 });
console.log("result", await queue.result(id));

const charge = await queue.enqueue("charge", [1999], { notes: { order: "A-1" } });
try {
  await queue.result(charge);
} catch (err) {
  if (!(err instanceof JobFailedError)) throw err;
  console.log(
    "dead:",
    (await queue.deadLetters()).map((d) => d.id),
  );
  console.log("attempts:", (await queue.getJobErrors(charge)).length);
}

console.log(await queue.stats());
await worker.stop();
await queue.close();
