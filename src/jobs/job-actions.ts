import type { Broker } from "../contract/broker.js";
import type { MessageRecord } from "../contract/job-service.js";
import type { QueueCore } from "./core.js";
import { JobNotFoundError, JobStateError } from "./errors.js";
import { cancelFlow, isFlowChild } from "./flows.js";
import { seqOf, statusOf } from "./job-record.js";

/** The job's record, or `JobNotFoundError`. */
async function find(broker: Broker, id: string): Promise<MessageRecord> {
  const seq = seqOf(id);
  const [rec] = seq === undefined ? [] : await broker.getMessages([seq]);
  if (!rec) throw new JobNotFoundError(id);
  return rec;
}

/** Why a request changed nothing: the job is gone, or (now) in a state that refuses it. */
async function refusal(broker: Broker, id: string, action: string): Promise<Error> {
  const seq = seqOf(id)!;
  const [rec] = await broker.getMessages([seq]);
  if (!rec) return new JobNotFoundError(id);
  return new JobStateError(id, statusOf(rec.state, rec.deliveryCount), action);
}

/** `queue.promote`: a delayed job, or one waiting out a retry's backoff, becomes claimable now. */
export async function promoteJob(core: QueueCore, id: string): Promise<void> {
  const broker = await core.broker();
  const rec = await find(broker, id);
  if (rec.state !== "scheduled")
    throw new JobStateError(id, statusOf(rec.state, rec.deliveryCount), "promote");
  if ((await broker.promoteMessages(rec.queue, [rec.seqNumber])) === 0)
    throw await refusal(broker, id, "promote");
}

/**
 * `queue.removeJob`: deletes a job that is not running (its result, errors and log go with it). A
 * parent still waiting for its children has its pending children cancelled first; a removed child
 * counts as done for its parent.
 */
export async function removeJob(core: QueueCore, id: string): Promise<void> {
  const broker = await core.broker();
  const rec = await find(broker, id);
  if (rec.state === "locked") throw new JobStateError(id, "running", "remove");
  if (rec.state === "deferred") await cancelFlow(core, broker, rec.seqNumber, core.resultTtlMs);
  if ((await broker.removeMessages(rec.queue, [rec.seqNumber])) === 0)
    throw await refusal(broker, id, "remove");
  if (isFlowChild(rec)) await broker.releaseDependents([rec.seqNumber]);
}

/**
 * `queue.retryJob`: a dead job runs again with a fresh retry budget (as `retryDead`); a failed one
 * (waiting out its backoff) runs its next attempt now.
 */
export async function retryJob(core: QueueCore, id: string): Promise<void> {
  const broker = await core.broker();
  const rec = await find(broker, id);
  const status = statusOf(rec.state, rec.deliveryCount);
  let done: number;
  if (status === "dead") done = await broker.redrive(rec.queue, { seqNumbers: [rec.seqNumber] });
  else if (status === "failed") done = await broker.promoteMessages(rec.queue, [rec.seqNumber]);
  else throw new JobStateError(id, status, "retry");
  if (done === 0) throw await refusal(broker, id, "retry");
}
