import { useEffect, useState } from "preact/hooks";
import type { Msg } from "../components/message.js";
import type { QueueSnapshot } from "./live.js";
import { api } from "./session.js";

/**
 * Which queues hold jobs. The job face marks no queue, so a queue counts as a job queue when a
 * worker serves it (its heartbeats name it), or when its newest message is shaped as the job face
 * writes every job: a task name (subject) with its own lease and its own attempt budget, which
 * plain broker sends do not carry.
 */
export function looksLikeJob(m: Msg): boolean {
  return !!m.subject && (m.lock_duration_ms ?? 0) > 0 && (m.max_delivery_count ?? 0) > 0;
}

/** What was learnt of each queue: true (jobs), false (plain messages). Unknown until it has a message. */
const known = new Map<string, boolean>();

async function classify(queues: QueueSnapshot[], served: Set<string>): Promise<void> {
  for (const q of queues) {
    if (served.has(q.name)) known.set(q.name, true);
    if (known.has(q.name) || q.total === 0) continue;
    const [newest] = (await api().call("browse", { queues: [q.name], limit: 1 })).messages;
    if (newest) known.set(q.name, looksLikeJob(newest));
  }
}

/**
 * The job queues among the snapshot's plain queues (subscription queues never hold jobs; task
 * subscriptions deliver into the task's job queue). `undefined` until the first answer.
 */
export function useJobQueues(
  queues: QueueSnapshot[] | undefined,
  workerQueues: string[] | undefined,
): string[] | undefined {
  const plain = (queues ?? []).filter((q) => q.kind === "queue");
  const signature = plain.map((q) => `${q.name}:${q.total === 0 ? 0 : 1}`).join("|");
  const servedKey = (workerQueues ?? []).join("|");
  const [names, setNames] = useState<string[] | undefined>(undefined);
  useEffect(() => {
    if (!queues || !workerQueues) return;
    let live = true;
    const served = new Set(workerQueues);
    // A failed look (an outage) leaves those queues unknown; the next snapshot change looks again.
    void classify(plain, served)
      .catch(() => undefined)
      .then(() => {
        if (live) setNames(plain.filter((q) => known.get(q.name) === true).map((q) => q.name));
      });
    return () => {
      live = false;
    };
  }, [signature, servedKey, !!queues, !!workerQueues]);
  return names;
}
