import { dependencyToWire, eventToWire, messageLogToWire, outgoingFromWire } from "../../wire/index.js";
import type { Handlers } from "./context.js";

type FlowRoutes =
  | "sendFlow"
  | "releaseDependents"
  | "dependencies"
  | "appendMessageLog"
  | "messageLog"
  | "appendEvents"
  | "readEvents"
  | "addMetrics"
  | "readMetrics"
  | "sendDebounced";

/** Flows, message logs and the event log of the job face. */
export const flowHandlers: Pick<Handlers, FlowRoutes> = {
  async sendFlow(req, ctx) {
    const nodes = (req.nodes ?? []).map((n) => ({
      queue: n.queue ?? "",
      message: outgoingFromWire(n.message),
      ...(n.parent !== undefined && n.parent !== null && { parent: n.parent }),
      ...(n.fail_parent_on_failure === false && { failParentOnFailure: false }),
    }));
    ctx.note({ msgs: nodes.length });
    return { seq_numbers: await ctx.broker.sendFlow(nodes) };
  },

  async releaseDependents(req, ctx) {
    const seqs = req.seq_numbers ?? undefined;
    return { released: await ctx.broker.releaseDependents(seqs) };
  },

  async dependencies(req, ctx) {
    ctx.note({ seq: req.seq_number ?? 0 });
    return { dependencies: (await ctx.broker.dependencies(req.seq_number ?? 0)).map(dependencyToWire) };
  },

  async appendMessageLog(req, ctx) {
    const queue = req.queue ?? "";
    ctx.note({ queue, seq: req.seq_number ?? 0 });
    const total = await ctx.broker.appendMessageLog(
      queue,
      req.seq_number ?? 0,
      req.lock_token ?? "",
      req.lines ?? [],
    );
    return { total };
  },

  async messageLog(req, ctx) {
    ctx.note({ seq: req.seq_number ?? 0 });
    const page = await ctx.broker.messageLog(req.seq_number ?? 0, {
      ...(req.offset !== undefined && req.offset !== null && { offset: req.offset }),
      ...(req.limit !== undefined && req.limit !== null && { limit: req.limit }),
    });
    return messageLogToWire(page);
  },

  async appendEvents(req, ctx) {
    await ctx.broker.appendEvents(req.events ?? []);
    return {};
  },

  async readEvents(req, ctx) {
    const page = await ctx.broker.readEvents(req.after_id ?? 0, {
      ...(req.limit !== undefined && req.limit !== null && { limit: req.limit }),
    });
    return { events: page.events.map(eventToWire), last_id: page.lastId };
  },

  async addMetrics(req, ctx) {
    await ctx.broker.addMetrics(req.increments ?? []);
    return {};
  },

  async readMetrics(req, ctx) {
    const points = await ctx.broker.readMetrics(req.kind, {
      ...(req.queues !== undefined && req.queues !== null && { queues: req.queues }),
      ...(req.from_ms !== undefined && req.from_ms !== null && { from: req.from_ms }),
      ...(req.to_ms !== undefined && req.to_ms !== null && { to: req.to_ms }),
    });
    return { points: points.map((p) => ({ minute_ms: p.minute, count: p.count })) };
  },

  async sendDebounced(req, ctx) {
    const queue = req.queue ?? "";
    ctx.note({ queue, msgs: 1 });
    const out = await ctx.broker.sendDebounced(queue, outgoingFromWire(req.message), {
      key: req.key,
      windowMs: req.window_ms,
      maxWaitMs: req.max_wait_ms,
      replaceBody: req.replace_body === true,
    });
    return { seq_number: out.seqNumber, created: out.created };
  },
};
