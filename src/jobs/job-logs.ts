import type { Broker } from "../contract/broker.js";
import type { Message } from "../contract/types.js";
import type { JobContext } from "./context.js";
import type { QueueCore } from "./core.js";
import { QueueError } from "./errors.js";
import type { RunningJob } from "./job-runner.js";
import { splitEngineQueue } from "./naming.js";

/** What a handler's `currentJob()` offers for its log and progress. */
export function logAndProgress(
  core: QueueCore,
  broker: Broker,
  job: RunningJob,
  m: Message,
): Pick<JobContext, "log" | "updateProgress" | "setProgress"> {
  const jobId = String(m.seqNumber);
  const store = async (value: number) => {
    await broker.setProgress(job.queue, job.seq, job.lockToken, value);
    core.events.emit("job.progress", {
      jobId,
      progress: value,
      taskName: m.subject ?? "",
      queue: splitEngineQueue(job.queue).queue,
    });
  };
  return {
    // FlexiQ's name: clamps rather than refuses, and reports like `updateProgress`.
    setProgress: (percent) => store(Math.round(Math.min(100, Math.max(0, percent)))),
    log: async (text) => {
      if (typeof text !== "string") throw new QueueError("a log line must be a string");
      await broker.appendMessageLog(job.queue, job.seq, job.lockToken, [text]);
    },
    updateProgress: async (progress) => {
      if (typeof progress !== "number" || !Number.isFinite(progress) || progress < 0 || progress > 100)
        throw new QueueError("progress must be a number within 0..100");
      await store(Math.round(progress));
    },
  };
}
