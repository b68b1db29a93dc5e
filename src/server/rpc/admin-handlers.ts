import {
  queueConfigFromWire,
  queueInfoToWire,
  type RequestOf,
  type ResponseOf,
  sampleFromWire,
  statusToWire,
  subscriptionToWire,
} from "../../wire/index.js";
import type { Handlers, RpcContext } from "./context.js";

type AdminRoutes =
  | "createQueue"
  | "subscribe"
  | "listQueues"
  | "listSubscriptions"
  | "testFilter"
  | "redrive"
  | "purge"
  | "status"
  | "deleteQueue"
  | "unsubscribe"
  | "pauseSubscription"
  | "resumeSubscription";

const EMPTY = {} as const;

function subscription(req: RequestOf<"unsubscribe">, ctx: RpcContext) {
  const topic = req.topic ?? "";
  const name = req.name ?? "";
  ctx.note({ queue: name });
  return [topic, name] as const;
}

async function status(_req: undefined, ctx: RpcContext): Promise<ResponseOf<"status">> {
  return statusToWire(await ctx.broker.status(), ctx.auth);
}

export const adminHandlers: Pick<Handlers, AdminRoutes> = {
  async createQueue(req, ctx) {
    const name = req.name ?? "";
    ctx.note({ queue: name });
    await ctx.broker.createQueue(name, queueConfigFromWire(req.config));
    return EMPTY;
  },

  async subscribe(req, ctx) {
    const name = req.name ?? "";
    ctx.note({ queue: name });
    const config = queueConfigFromWire(req.config);
    await ctx.broker.subscribe(req.topic ?? "", name, {
      ...(req.filter?.expr && { filter: req.filter.expr }),
      ...(config && { config }),
    });
    return EMPTY;
  },

  async listQueues(_req, ctx) {
    const queues = await ctx.broker.listQueues();
    ctx.note({ n: queues.length });
    return { queues: queues.map(queueInfoToWire) };
  },

  async listSubscriptions(_req, ctx) {
    const subs = await ctx.broker.listSubscriptions();
    ctx.note({ n: subs.length });
    return {
      subscriptions: subs.map(subscriptionToWire),
    };
  },

  async testFilter(req, ctx) {
    const r = await ctx.broker.testFilter(
      req.expr ?? "",
      req.message ? sampleFromWire(req.message) : undefined,
    );
    return { valid: r.valid, ...(r.error && { error: r.error }), ran: r.ran, matched: r.matched };
  },

  async redrive(req, ctx) {
    const queue = req.queue ?? "";
    ctx.note({ queue });
    const moved = await ctx.broker.redrive(queue, {
      ...(req.target && { target: req.target }),
      max: req.max ?? 0,
      olderThanMs: req.older_than_ms ?? 0,
      ratePerSec: req.rate_per_sec ?? 0,
      ...(req.seq_numbers && { seqNumbers: req.seq_numbers }),
    });
    ctx.note({ n: moved });
    return { moved };
  },

  async purge(req, ctx) {
    const queue = req.queue ?? "";
    ctx.note({ queue });
    const purged = await ctx.broker.purge(queue, { max: req.max ?? 0, olderThanMs: req.older_than_ms ?? 0 });
    ctx.note({ n: purged });
    return { purged };
  },

  status,

  async deleteQueue(req, ctx) {
    const name = req.name ?? "";
    ctx.note({ queue: name });
    await ctx.broker.deleteQueue(name);
    return EMPTY;
  },

  async unsubscribe(req, ctx) {
    await ctx.broker.unsubscribe(...subscription(req, ctx));
    return EMPTY;
  },

  async pauseSubscription(req, ctx) {
    await ctx.broker.pauseSubscription(...subscription(req, ctx));
    return EMPTY;
  },

  async resumeSubscription(req, ctx) {
    await ctx.broker.resumeSubscription(...subscription(req, ctx));
    return EMPTY;
  },
};
