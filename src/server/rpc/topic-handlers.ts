import {
  backlogToWire,
  declaredTopicToWire,
  logStatToWire,
  outgoingFromWire,
  publishResultToWire,
  topicMessageToWire,
} from "../../wire/index.js";
import type { Handlers } from "./context.js";

type TopicRoutes =
  | "subscribeTask"
  | "subscribeLog"
  | "publish"
  | "declareTopic"
  | "listDeclaredTopics"
  | "readTopic"
  | "ackTopic"
  | "leaseTopic"
  | "ackMessage"
  | "nackMessage"
  | "topicStats"
  | "topicLogStats"
  | "reapSubscriptions";

const given = <T>(v: T | null | undefined): v is T => v !== undefined && v !== null;

export const topicHandlers: Pick<Handlers, TopicRoutes> = {
  async subscribeTask(req, ctx) {
    const name = req.name ?? "";
    ctx.note({ queue: name });
    await ctx.broker.subscribeTask(req.topic ?? "", name, {
      task: req.task ?? "",
      queue: req.queue ?? "",
      ...(req.filter?.expr && { filter: req.filter.expr }),
      ...(req.durable === false && { durable: false }),
      ...(req.owner && { owner: req.owner }),
      ...(given(req.priority) && { priority: req.priority }),
      ...(req.max_delivery_count && { maxDeliveryCount: req.max_delivery_count }),
      ...(req.lock_duration_ms && { lockDurationMs: req.lock_duration_ms }),
    });
    return {};
  },

  async subscribeLog(req, ctx) {
    const name = req.name ?? "";
    ctx.note({ queue: name });
    await ctx.broker.subscribeLog(req.topic ?? "", name, {
      ...(req.filter?.expr && { filter: req.filter.expr }),
    });
    return {};
  },

  async publish(req, ctx) {
    const topic = req.topic ?? "";
    ctx.note({ queue: topic });
    const message = outgoingFromWire(req.message ?? {});
    if (given(req.priority)) message.priority = req.priority;
    const r = await ctx.broker.publish(topic, message, {
      ...(req.scheduled_enqueue_time_ms && { scheduledAt: req.scheduled_enqueue_time_ms }),
      ...(req.ttl_ms && req.ttl_ms > 0 && { ttlMs: req.ttl_ms }),
    });
    ctx.note({ n: r.deliveries.length });
    return publishResultToWire(r);
  },

  async declareTopic(req, ctx) {
    const name = req.name ?? "";
    ctx.note({ queue: name });
    await ctx.broker.declareTopic(name, given(req.retention_ms) ? { retentionMs: req.retention_ms } : {});
    return {};
  },

  async listDeclaredTopics(_req, ctx) {
    return { topics: (await ctx.broker.listDeclaredTopics()).map(declaredTopicToWire) };
  },

  async readTopic(req, ctx) {
    ctx.note({ queue: req.name ?? "" });
    const messages = await ctx.broker.readTopic(req.topic ?? "", req.name ?? "", {
      ...(given(req.limit) && { limit: req.limit }),
      maxBytes: req.max_bytes ?? undefined,
    });
    ctx.note({ msgs: messages.length });
    return { messages: messages.map(topicMessageToWire) };
  },

  async ackTopic(req, ctx) {
    return { ok: await ctx.broker.ackTopic(req.topic ?? "", req.name ?? "", req.id ?? 0) };
  },

  async leaseTopic(req, ctx) {
    ctx.note({ queue: req.name ?? "" });
    const messages = await ctx.broker.leaseTopic(req.topic ?? "", req.name ?? "", {
      ...(given(req.limit) && { limit: req.limit }),
      ...(given(req.visibility_ms) && { visibilityMs: req.visibility_ms }),
      maxBytes: req.max_bytes ?? undefined,
    });
    ctx.note({ msgs: messages.length });
    return { messages: messages.map(topicMessageToWire) };
  },

  async ackMessage(req, ctx) {
    return { ok: await ctx.broker.ackMessage(req.topic ?? "", req.name ?? "", req.id ?? 0) };
  },

  async nackMessage(req, ctx) {
    return { ok: await ctx.broker.nackMessage(req.topic ?? "", req.name ?? "", req.id ?? 0) };
  },

  async topicStats(req, ctx) {
    const rows = await ctx.broker.topicStats(req.topic || undefined);
    return { subscriptions: rows.map(backlogToWire) };
  },

  async topicLogStats(req, ctx) {
    const rows = await ctx.broker.topicLogStats(req.topic || undefined);
    return { subscriptions: rows.map(logStatToWire) };
  },

  async reapSubscriptions(req, ctx) {
    const reaped = await ctx.broker.reapSubscriptions({
      ...(req.liveness_ms && { livenessMs: req.liveness_ms }),
      ...(req.grace_ms && { graceMs: req.grace_ms }),
    });
    return { reaped };
  },
};
