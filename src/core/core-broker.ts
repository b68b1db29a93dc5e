import { InvalidArgumentError } from "../contract/errors.js";
import { MAX_RENEW_BATCH } from "../contract/limits.js";
import type {
  DeclareTopicOptions,
  EngineDeclaredTopic,
  EngineTopicLogStat,
  LeaseTopicOptions,
  ReadTopicOptions,
  TopicLogMessage,
} from "../contract/topic-service.js";
import type {
  AbandonOptions,
  CompleteItem,
  CompleteOptions,
  CompleteResult,
  LockRef,
  RejectOptions,
  RenewBatchOptions,
  RenewResult,
} from "../contract/types.js";
import { DEFAULT_VISIBILITY_MS } from "./fanout.js";
import { leaseCap } from "./lease.js";
import type { Dialect } from "./port.js";
import { integer, nonNegativeDuration, requireName, seqNumber } from "./validate.js";
import * as settle from "./verbs/settle.js";
import * as topics from "./verbs/topics.js";

/**
 * The broker's verbs, written once over a storage dialect. A verb validates its input here (bad
 * input is refused before any transaction), then runs its rule (`verbs/*.ts`) in the dialect's
 * transaction. The SQLite and PostgreSQL brokers extend this class with their connection handling.
 */
export abstract class CoreBroker {
  /** The dialect's transactions (set by the subclass's constructor). */
  protected abstract readonly dialect: Dialect;

  // --- settlement -------------------------------------------------------------------------------

  complete(queue: string, seq: number, lockToken: string, options?: CompleteOptions): Promise<void> {
    return this.guard(() => {
      const keep = keepOptions(options);
      const s = seqNumber(seq);
      return this.dialect.write((w) => settle.complete(w, queue, s, lockToken, keep), { oneStatement: true });
    });
  }

  completeBatch(queue: string, items: CompleteItem[]): Promise<CompleteResult[]> {
    return this.guard(() => {
      const refs = items.map((i) => ({
        seqNumber: seqNumber(i.seqNumber),
        lockToken: i.lockToken,
        keep: keepOptions(i),
      }));
      return this.dialect.write((w) => settle.completeBatch(w, queue, refs), { oneStatement: true });
    });
  }

  abandon(queue: string, seq: number, lockToken: string, options: AbandonOptions = {}): Promise<void> {
    return this.guard(() => {
      const input = {
        delayMs: nonNegativeDuration(options.delayMs, "delay_ms"),
        countDelivery: options.countDelivery !== false,
        error: options.error,
      };
      const s = seqNumber(seq);
      return this.dialect.write((w) => settle.abandon(w, queue, s, lockToken, input), { oneStatement: true });
    });
  }

  reject(queue: string, seq: number, lockToken: string, options: RejectOptions = {}): Promise<void> {
    return this.guard(() => {
      const s = seqNumber(seq);
      return this.dialect.write((w) => settle.reject(w, queue, s, lockToken, options), {
        oneStatement: true,
      });
    });
  }

  defer(queue: string, seq: number, lockToken: string): Promise<void> {
    return this.guard(() => {
      const s = seqNumber(seq);
      return this.dialect.write((w) => settle.defer(w, queue, s, lockToken), { oneStatement: true });
    });
  }

  renew(queue: string, seq: number, lockToken: string): Promise<void> {
    return this.guard(() => {
      const s = seqNumber(seq);
      return this.dialect.write((w) => settle.renew(w, queue, s, lockToken), { oneStatement: true });
    });
  }

  renewBatch(queue: string, items: LockRef[], options: RenewBatchOptions = {}): Promise<RenewResult[]> {
    return this.guard(() => {
      if (items.length > MAX_RENEW_BATCH) {
        throw new InvalidArgumentError(`mqlite: at most ${MAX_RENEW_BATCH} renewals per batch`);
      }
      const capMs = leaseCap(options.lockDurationMs);
      if (items.every((i) => !i.lockToken)) {
        return Promise.resolve(items.map((i) => ({ seqNumber: i.seqNumber, ok: false })));
      }
      const refs = items.map((i) => ({ seqNumber: seqNumber(i.seqNumber), lockToken: i.lockToken }));
      return this.dialect.write((w) => settle.renewBatch(w, queue, refs, capMs), { oneStatement: true });
    });
  }

  // --- claim: receive, receiveDeferred, receiveAny, peek: claiming with ordering, priority, gates and long-polls ---

  // (end of claim)

  // --- send: send, schedule, cancel, publish, sendFlow, sendDebounced: insertion, fan-out, dedup ---

  // (end of send)

  // --- queues: queues and subscriptions: create, delete, list, stats, pause, subscribe, filters, reaping ---

  // (end of queues)

  // --- topics: declared and log topics: declare, read, ack, lease, nack, stats ---

  declareTopic(name: string, options: DeclareTopicOptions = {}): Promise<void> {
    return this.guard(() => {
      requireName(name, "topic");
      const retention =
        options.retentionMs === undefined || options.retentionMs === null
          ? null
          : nonNegativeDuration(options.retentionMs, "retention_ms");
      return this.dialect.write((w) => topics.declareTopic(w, name, retention));
    });
  }

  listDeclaredTopics(): Promise<EngineDeclaredTopic[]> {
    return this.dialect.read(() => topics.listDeclaredTopics());
  }

  readTopic(topic: string, name: string, options: ReadTopicOptions = {}): Promise<TopicLogMessage[]> {
    return this.guard(() => {
      const limit = topics.topicLimit(options.limit);
      return this.dialect.read((now) => topics.readTopic(now, topic, name, limit));
    });
  }

  ackTopic(topic: string, name: string, id: number): Promise<boolean> {
    return this.guard(() => {
      const ref = { topic, name, id: integer(id, "id") };
      return this.dialect.write((w) => topics.ackTopic(w, ref), { oneStatement: true });
    });
  }

  leaseTopic(topic: string, name: string, options: LeaseTopicOptions = {}): Promise<TopicLogMessage[]> {
    return this.guard(() => {
      const visibility =
        options.visibilityMs === undefined
          ? DEFAULT_VISIBILITY_MS
          : nonNegativeDuration(options.visibilityMs, "visibility_ms");
      const limit = topics.topicLimit(options.limit);
      return this.dialect.write((w) => topics.leaseTopic(w, topic, name, limit, visibility));
    });
  }

  ackMessage(topic: string, name: string, id: number): Promise<boolean> {
    return this.guard(() => {
      const ref = { topic, name, id: integer(id, "id") };
      return this.dialect.write((w) => topics.ackMessage(w, ref), { oneStatement: true });
    });
  }

  nackMessage(topic: string, name: string, id: number): Promise<boolean> {
    return this.guard(() => {
      const ref = { topic, name, id: integer(id, "id") };
      return this.dialect.write((w) => topics.nackMessage(w, ref), { oneStatement: true });
    });
  }

  topicLogStats(topic?: string): Promise<EngineTopicLogStat[]> {
    return this.dialect.read((now) => topics.topicLogStats(now, topic));
  }

  // (end of topics)

  // --- maintenance: the dead-letter queue and upkeep: redrive, purge, the background steps, retention ---

  // (end of maintenance)

  // --- records: job records: cancel, progress, browse, errors, delete settled, promote, remove, workers, named locks ---

  // (end of records)

  // --- flows: flows, job logs, events and metrics: dependencies, message logs, the event log, per-minute metrics ---

  // (end of flows)

  /** Runs `fn`, turning a synchronous throw (refused input) into a rejected promise. */
  protected guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return fn();
    } catch (err) {
      return Promise.reject(err);
    }
  }
}

/** Validates `complete`'s options: what to keep, if anything. */
export function keepOptions(options: CompleteOptions | undefined): settle.KeepOptions | undefined {
  const retainMs = nonNegativeDuration(options?.retainMs, "retain_ms");
  if (retainMs === 0) return undefined;
  const r = options?.result;
  const result = r === undefined || r === null ? null : Buffer.from(r.buffer, r.byteOffset, r.byteLength);
  return { retainMs, result };
}
