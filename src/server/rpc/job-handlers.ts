import { CancelledError, ClosedError } from "../../contract/errors.js";
import type { ClaimGate } from "../../contract/job-service.js";
import type { MessageState } from "../../contract/types.js";
import {
  attemptErrorToWire,
  messageToWire,
  type RequestOf,
  recordToWire,
  workerInfoFromWire,
  workerRecordToWire,
} from "../../wire/index.js";
import type { Handlers, RpcContext } from "./context.js";
import { giveBackIfUndelivered } from "./give-back.js";

type JobRoutes =
  | "pauseQueue"
  | "resumeQueue"
  | "receiveAny"
  | "cancelMessage"
  | "setProgress"
  | "getMessages"
  | "browse"
  | "messageErrors"
  | "awaitSettled"
  | "deleteSettled"
  | "promoteMessages"
  | "removeMessages"
  | "heartbeat"
  | "listWorkers"
  | "removeWorker"
  | "acquireLock"
  | "releaseLock";

/** A long-poll woken by a graceful stop answers empty rather than failing. */
async function orEmptyOnStop<T>(ctx: RpcContext, poll: Promise<T[]>): Promise<T[]> {
  try {
    return await poll;
  } catch (err) {
    if (ctx.stopping.aborted && (err instanceof CancelledError || err instanceof ClosedError)) return [];
    throw err;
  }
}

function gates(list: RequestOf<"receiveAny">["gates"]): ClaimGate[] | undefined {
  if (!list) return undefined;
  return list.map((g) => ({
    subject: g.subject ?? "",
    ...(g.max_locked !== undefined && g.max_locked !== null && { maxLocked: g.max_locked }),
    ...(g.rate && { rate: { limit: g.rate.limit ?? 0, intervalMs: g.rate.interval_ms ?? 0 } }),
  }));
}

const states = (list: string[] | null | undefined) => (list ? (list as MessageState[]) : undefined);

export const jobHandlers: Pick<Handlers, JobRoutes> = {
  async pauseQueue(req, ctx) {
    ctx.note({ queue: req.name ?? "" });
    await ctx.broker.pauseQueue(req.name ?? "");
    return {};
  },

  async resumeQueue(req, ctx) {
    ctx.note({ queue: req.name ?? "" });
    await ctx.broker.resumeQueue(req.name ?? "");
    return {};
  },

  async receiveAny(req, ctx) {
    const queues = req.queues ?? [];
    ctx.note({ queue: queues.join(",") });
    const messages = await orEmptyOnStop(
      ctx,
      ctx.broker.receiveAny(queues, {
        maxMessages: req.max_messages ?? 0,
        waitMs: req.wait_time_ms ?? 0,
        ...(req.gates && { gates: gates(req.gates) }),
        ...(req.lock_duration_ms !== undefined &&
          req.lock_duration_ms !== null && { lockDurationMs: req.lock_duration_ms }),
        signal: ctx.signal,
        maxBytes: req.max_bytes ?? undefined,
      }),
    );
    ctx.note({ msgs: messages.length, ...(messages.length === 0 && { quiet: true }) });
    giveBackIfUndelivered(ctx, messages, (m) => m.queue ?? "");
    return { messages: messages.map(messageToWire) };
  },

  async cancelMessage(req, ctx) {
    const queue = req.queue ?? "";
    ctx.note({ queue, seq: req.seq_number ?? 0 });
    const outcome = await ctx.broker.cancelMessage(queue, req.seq_number ?? 0, {
      ...(req.lock_token && { lockToken: req.lock_token }),
      ...(req.retain_ms !== undefined && req.retain_ms !== null && { retainMs: req.retain_ms }),
    });
    return { outcome };
  },

  async setProgress(req, ctx) {
    const queue = req.queue ?? "";
    ctx.note({ queue, seq: req.seq_number ?? 0 });
    await ctx.broker.setProgress(queue, req.seq_number ?? 0, req.lock_token ?? "", req.progress ?? 0);
    return { ok: true };
  },

  async getMessages(req, ctx) {
    const records = await ctx.broker.getMessages(req.seq_numbers ?? []);
    ctx.note({ msgs: records.length });
    return { messages: records.map(recordToWire) };
  },

  async browse(req, ctx) {
    const records = await ctx.broker.browse({
      ...(req.queues && { queues: req.queues }),
      ...(req.states && { states: states(req.states) }),
      ...(typeof req.backing_off === "boolean" && { backingOff: req.backing_off }),
      ...(req.subject && { subject: req.subject }),
      ...(req.settled_before_ms && { settledBefore: req.settled_before_ms }),
      ...(req.limit && { limit: req.limit }),
      ...(req.offset && { offset: req.offset }),
      ...(req.order && { order: req.order as "newest" | "settled" }),
    });
    ctx.note({ msgs: records.length });
    return { messages: records.map(recordToWire) };
  },

  async messageErrors(req, ctx) {
    ctx.note({ seq: req.seq_number ?? 0 });
    return { errors: (await ctx.broker.messageErrors(req.seq_number ?? 0)).map(attemptErrorToWire) };
  },

  async awaitSettled(req, ctx) {
    const settled = await orEmptyOnStop(
      ctx,
      ctx.broker.awaitSettled(req.seq_numbers ?? [], { waitMs: req.wait_time_ms ?? 0, signal: ctx.signal }),
    );
    ctx.note({ n: settled.length, ...(settled.length === 0 && { quiet: true }) });
    return { seq_numbers: settled };
  },

  async deleteSettled(req, ctx) {
    const queue = req.queue ?? "";
    ctx.note({ queue });
    const deleted = await ctx.broker.deleteSettled(queue, {
      ...(req.states && { states: states(req.states) }),
      ...(req.older_than_ms && { olderThanMs: req.older_than_ms }),
      ...(req.seq_numbers && { seqNumbers: req.seq_numbers }),
      ...(req.subject !== undefined && req.subject !== null && { subject: req.subject }),
      ...(req.keep_newest !== undefined && req.keep_newest !== null && { keepNewest: req.keep_newest }),
    });
    ctx.note({ n: deleted });
    return { deleted };
  },

  async promoteMessages(req, ctx) {
    const queue = req.queue ?? "";
    ctx.note({ queue });
    const promoted = await ctx.broker.promoteMessages(queue, req.seq_numbers ?? []);
    ctx.note({ n: promoted });
    return { promoted };
  },

  async removeMessages(req, ctx) {
    const queue = req.queue ?? "";
    ctx.note({ queue });
    const removed = await ctx.broker.removeMessages(queue, req.seq_numbers ?? []);
    ctx.note({ n: removed });
    return { removed };
  },

  async heartbeat(req, ctx) {
    const worker = workerInfoFromWire(req.worker ?? {});
    const r = await ctx.broker.heartbeat(
      worker,
      req.stale_after_ms ? { staleAfterMs: req.stale_after_ms } : {},
    );
    return { registered: r.registered, reaped: r.reaped.map(workerRecordToWire) };
  },

  async listWorkers(_req, ctx) {
    return { workers: (await ctx.broker.listWorkers()).map(workerRecordToWire) };
  },

  async removeWorker(req, ctx) {
    return { removed: await ctx.broker.removeWorker(req.worker_id ?? "") };
  },

  async acquireLock(req, ctx) {
    return { acquired: await ctx.broker.acquireLock(req.name ?? "", req.owner ?? "", req.ttl_ms ?? 0) };
  },

  async releaseLock(req, ctx) {
    return { released: await ctx.broker.releaseLock(req.name ?? "", req.owner ?? "") };
  },
};
