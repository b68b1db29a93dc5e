import type {
  DeclareTopicOptions,
  EngineDeclaredTopic,
  EngineTopicLogStat,
  LeaseTopicOptions,
  LogSubscribeOptions,
  PublishResult,
  ReadTopicOptions,
  ReapOptions,
  TaskSubscribeOptions,
  TopicBacklog,
  TopicLogMessage,
  TopicService,
} from "../contract/topic-service.js";
import type { OutgoingMessage, SendOptions } from "../contract/types.js";
import {
  backlogFromWire,
  declaredTopicFromWire,
  logStatFromWire,
  outgoingToWire,
  publishResultFromWire,
  topicMessageFromWire,
} from "../wire/index.js";
import { maxBytesField, notNegative } from "./encode.js";
import { RemoteJobService } from "./remote-jobs.js";

/** Job topics over HTTP (`mqlite.v1.TopicService/*`). */
export abstract class RemoteTopicService extends RemoteJobService implements TopicService {
  async subscribeTask(topic: string, name: string, options: TaskSubscribeOptions): Promise<void> {
    await this.http.call("subscribeTask", {
      topic,
      name,
      task: options?.task,
      queue: options?.queue,
      ...(options?.filter && { filter: { expr: options.filter } }),
      ...(options?.durable === false && { durable: false }),
      ...(options?.owner && { owner: options.owner }),
      ...(options?.priority !== undefined && { priority: options.priority }),
      ...(options?.maxDeliveryCount !== undefined && { max_delivery_count: options.maxDeliveryCount }),
      ...(options?.lockDurationMs !== undefined && { lock_duration_ms: options.lockDurationMs }),
    });
  }

  async subscribeLog(topic: string, name: string, options: LogSubscribeOptions = {}): Promise<void> {
    await this.http.call("subscribeLog", {
      topic,
      name,
      ...(options.filter && { filter: { expr: options.filter } }),
    });
  }

  async publish(topic: string, message: OutgoingMessage, options: SendOptions = {}): Promise<PublishResult> {
    notNegative(options.ttlMs, "ttl_ms");
    const res = await this.http.call("publish", {
      topic,
      message: outgoingToWire(message),
      ...(message?.priority !== undefined && { priority: message.priority }),
      ...(options.scheduledAt !== undefined && { scheduled_enqueue_time_ms: options.scheduledAt }),
      ...(options.ttlMs !== undefined && { ttl_ms: options.ttlMs }),
    });
    return publishResultFromWire(res);
  }

  async declareTopic(name: string, options: DeclareTopicOptions = {}): Promise<void> {
    notNegative(options.retentionMs, "retention_ms");
    await this.http.call("declareTopic", {
      name,
      ...(options.retentionMs !== undefined && { retention_ms: options.retentionMs }),
    });
  }

  async listDeclaredTopics(): Promise<EngineDeclaredTopic[]> {
    return (await this.http.call("listDeclaredTopics", undefined)).topics.map(declaredTopicFromWire);
  }

  async readTopic(topic: string, name: string, options: ReadTopicOptions = {}): Promise<TopicLogMessage[]> {
    const res = await this.http.call("readTopic", {
      topic,
      name,
      ...(options.limit !== undefined && { limit: Math.trunc(options.limit) }),
      ...maxBytesField(options.maxBytes),
    });
    return res.messages.map(topicMessageFromWire);
  }

  async ackTopic(topic: string, name: string, id: number): Promise<boolean> {
    return (await this.http.call("ackTopic", { topic, name, id })).ok;
  }

  async leaseTopic(topic: string, name: string, options: LeaseTopicOptions = {}): Promise<TopicLogMessage[]> {
    notNegative(options.visibilityMs, "visibility_ms");
    const res = await this.http.call("leaseTopic", {
      topic,
      name,
      ...(options.limit !== undefined && { limit: Math.trunc(options.limit) }),
      ...(options.visibilityMs !== undefined && { visibility_ms: options.visibilityMs }),
      ...maxBytesField(options.maxBytes),
    });
    return res.messages.map(topicMessageFromWire);
  }

  async ackMessage(topic: string, name: string, id: number): Promise<boolean> {
    return (await this.http.call("ackMessage", { topic, name, id })).ok;
  }

  async nackMessage(topic: string, name: string, id: number): Promise<boolean> {
    return (await this.http.call("nackMessage", { topic, name, id })).ok;
  }

  async topicStats(topic?: string): Promise<TopicBacklog[]> {
    const res = await this.http.call("topicStats", topic === undefined ? {} : { topic });
    return res.subscriptions.map(backlogFromWire);
  }

  async topicLogStats(topic?: string): Promise<EngineTopicLogStat[]> {
    const res = await this.http.call("topicLogStats", topic === undefined ? {} : { topic });
    return res.subscriptions.map(logStatFromWire);
  }

  async reapSubscriptions(options: ReapOptions = {}): Promise<number> {
    const res = await this.http.call("reapSubscriptions", {
      ...(options.livenessMs !== undefined && { liveness_ms: options.livenessMs }),
      ...(options.graceMs !== undefined && { grace_ms: options.graceMs }),
    });
    return res.reaped;
  }
}
