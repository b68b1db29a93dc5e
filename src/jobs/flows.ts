import type { Broker } from "../contract/broker.js";
import type { FlowNode } from "../contract/job-service.js";
import type { Message } from "../contract/types.js";
import type { QueueCore } from "./core.js";
import type { Enqueuer, PreparedJob } from "./enqueuer.js";
import { QueueError } from "./errors.js";
import { splitEngineQueue } from "./naming.js";
import type { FlowJob, FlowNodeIds } from "./types.js";

/** Marks a job that is a flow's child: settling it may release its parent. */
export const PROP_FLOW_CHILD = "flow_child";
/** Jobs in one flow (the engine's cap). */
export const MAX_FLOW_JOBS = 1000;
/** How deep a flow nests (a parent, its children, theirs…). */
export const MAX_FLOW_DEPTH = 32;
/** How often a worker resolves flows whose child settled without its worker telling (a crash, a lapsed lease). */
export const FLOW_SWEEP_MS = 5000;

interface Shape {
  index: number;
  children: Shape[];
}

/**
 * Stores a flow in one transaction: every job prepared as `enqueue` would (task defaults,
 * middleware, validation), parents waiting for their children. Returns the ids, shaped as the flow.
 */
export async function enqueueFlow(core: QueueCore, enqueuer: Enqueuer, flow: FlowJob): Promise<FlowNodeIds> {
  const nodes: FlowNode[] = [];
  const prepared: PreparedJob[] = [];
  const walk = (f: FlowJob, parent: number | undefined, depth: number): Shape => {
    if (f === null || typeof f !== "object") throw new QueueError("a flow job must be an object");
    if (depth > MAX_FLOW_DEPTH) throw new QueueError(`a flow nests at most ${MAX_FLOW_DEPTH} levels`);
    const children = f.children ?? [];
    if (!Array.isArray(children)) throw new QueueError("children must be an array of flow jobs");
    const { failParentOnFailure, ...options } = f.options ?? {};
    if ((options as { uniqueKey?: unknown }).uniqueKey !== undefined)
      throw new QueueError("a flow job takes no uniqueKey");
    if (children.length > 0 && options.delayMs)
      throw new QueueError("a flow job with children takes no delayMs: it runs when they are done");
    const job = enqueuer.prepare(f.task, f.args ?? [], options);
    if (job.debounce) throw new QueueError("a flow job cannot debounce");
    if (parent !== undefined) job.message.properties = { ...job.message.properties, [PROP_FLOW_CHILD]: "1" };
    const index = nodes.length;
    if (index >= MAX_FLOW_JOBS) throw new QueueError(`a flow has at most ${MAX_FLOW_JOBS} jobs`);
    const node: FlowNode = { queue: job.engineQueue, message: job.message };
    if (parent !== undefined) node.parent = parent;
    if (failParentOnFailure === false) node.failParentOnFailure = false;
    nodes.push(node);
    prepared.push(job);
    return { index, children: children.map((c) => walk(c, index, depth + 1)) };
  };
  const shape = walk(flow, undefined, 1);
  const broker = await core.broker();
  await ensureQueues(broker, new Set(nodes.map((n) => n.queue)));
  const seqs = await broker.sendFlow(nodes);
  if (core.events.has("job.enqueued")) {
    prepared.forEach((j, i) => {
      core.events.emit("job.enqueued", { jobId: String(seqs[i]), taskName: j.taskName, queue: j.queue });
    });
  }
  const ids = (s: Shape): FlowNodeIds => ({ id: String(seqs[s.index]), children: s.children.map(ids) });
  return ids(shape);
}

async function ensureQueues(broker: Broker, names: Set<string>): Promise<void> {
  const existing = new Set((await broker.listQueues()).map((q) => q.name));
  for (const name of names) if (!existing.has(name)) await broker.createQueue(name);
}

/** In a flow's parent (`currentJob().childResults()`): its completed children's results, by child id. */
export async function childResults<R>(
  core: QueueCore,
  broker: Broker,
  seq: number,
): Promise<Record<string, R>> {
  const done = (await broker.dependencies(seq)).filter((d) => d.outcome === "completed");
  const records = new Map(
    (await broker.getMessages(done.map((d) => d.seqNumber))).map((r) => [r.seqNumber, r]),
  );
  const out: Record<string, R> = {};
  for (const d of done) {
    const r = records.get(d.seqNumber);
    out[String(d.seqNumber)] = (r?.result ? core.serializer.deserialize(r.result) : undefined) as R;
  }
  return out;
}

/** In a flow's parent (`currentJob().childFailures()`): its dead or cancelled children's errors, by child id. */
export async function childFailures(broker: Broker, seq: number): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const d of await broker.dependencies(seq)) {
    if (d.outcome === "failed" || d.outcome === "cancelled") out[String(d.seqNumber)] = d.error ?? d.outcome;
  }
  return out;
}

/** True for a flow's child: settling it may release its parent. */
export function isFlowChild(m: Message): boolean {
  return m.properties?.[PROP_FLOW_CHILD] !== undefined;
}

/** Tells a settled child's parent (a no-op for a child that is not settled). */
export async function releaseParent(core: QueueCore, broker: Broker, seq: number): Promise<void> {
  try {
    await broker.releaseDependents([seq]);
  } catch (err) {
    // The sweep resolves it later.
    core.logger.warn({ jobId: String(seq), err: String(err) }, "could not release a flow's parent");
  }
}

/**
 * After a job was cancelled: cancels its waiting children (and theirs), and tells its own parent.
 * Children that already run are left to finish.
 */
export async function cancelFlow(
  core: QueueCore,
  broker: Broker,
  seq: number,
  retainMs: number,
): Promise<void> {
  const open = (await broker.dependencies(seq)).filter((d) => d.outcome === undefined);
  if (open.length > 0) {
    for (const r of await broker.getMessages(open.map((d) => d.seqNumber))) {
      if (r.state !== "active" && r.state !== "scheduled" && r.state !== "deferred") continue;
      const outcome = await broker.cancelMessage(r.queue, r.seqNumber, { retainMs });
      if (outcome !== "cancelled") continue;
      core.events.emit("job.cancelled", {
        jobId: String(r.seqNumber),
        taskName: r.subject ?? "",
        queue: splitEngineQueue(r.queue).queue,
      });
      await cancelFlow(core, broker, r.seqNumber, retainMs);
    }
  }
  const [self] = await broker.getMessages([seq]);
  if (self?.properties?.[PROP_FLOW_CHILD] !== undefined) await broker.releaseDependents([seq]);
}

/**
 * Resolves, every `FLOW_SWEEP_MS`, flows whose child settled without its worker telling the parent
 * (the worker crashed, or the child's lease lapsed at its delivery limit). Returns a stop function.
 */
export function startFlowSweep(core: QueueCore, intervalMs = FLOW_SWEEP_MS): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    core
      .broker()
      .then((b) => b.releaseDependents())
      .catch((err: unknown) => core.logger.warn({ err: String(err) }, "flow sweep failed"))
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
