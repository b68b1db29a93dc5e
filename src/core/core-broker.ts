import { InvalidArgumentError } from "../contract/errors.js";
import type { DebouncedSend, DebounceOptions } from "../contract/job-service.js";
import { MAX_RENEW_BATCH } from "../contract/limits.js";
import type { PublishResult } from "../contract/topic-service.js";
import type {
  AbandonOptions,
  CompleteItem,
  CompleteOptions,
  CompleteResult,
  LockRef,
  OutgoingMessage,
  RejectOptions,
  RenewBatchOptions,
  RenewResult,
  SendOptions,
} from "../contract/types.js";
import { leaseCap } from "./lease.js";
import { checkDebounce } from "./metrics-input.js";
import { type PreparedMessage, prepareMessages } from "./outgoing.js";
import type { Dialect, Verb, WriteScope } from "./port.js";
import { nonNegativeDuration, requireName, seqNumber } from "./validate.js";
import * as send from "./verbs/send.js";
import { sendDebounced } from "./verbs/send-debounce.js";
import * as settle from "./verbs/settle.js";

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

  /** The largest message body a send accepts, in bytes. */
  protected abstract readonly maxMessageBytes: number;

  send(
    queue: string,
    messages: OutgoingMessage | OutgoingMessage[],
    options: SendOptions = {},
  ): Promise<number[]> {
    return this.guard(() => {
      const at = send.sendAt(options);
      const prepared = prepareMessages(messages, this.maxMessageBytes);
      if (prepared.length === 0) return Promise.resolve([]);
      return this.sendPrepared(queue, prepared, at);
    });
  }

  schedule(
    queue: string,
    messages: OutgoingMessage | OutgoingMessage[],
    scheduledAt: number,
    options: Omit<SendOptions, "scheduledAt"> = {},
  ): Promise<number[]> {
    return this.send(queue, messages, { ...options, scheduledAt });
  }

  publish(topic: string, message: OutgoingMessage, options: SendOptions = {}): Promise<PublishResult> {
    return this.guard(() => {
      requireName(topic, "topic");
      const at = send.sendAt(options);
      if (Array.isArray(message)) throw new InvalidArgumentError("mqlite: publish takes one message");
      const prepared = prepareMessages(message, this.maxMessageBytes);
      return this.sendWrite((w) => publishOne(w, topic, prepared, at));
    });
  }

  cancel(queue: string, seq: number): Promise<void> {
    return this.guard(() => {
      const s = seqNumber(seq);
      return this.dialect.write((w) => send.cancel(w, queue, s), { oneStatement: true });
    });
  }

  sendDebounced(queue: string, message: OutgoingMessage, options: DebounceOptions): Promise<DebouncedSend> {
    return this.guard(() => {
      const d = checkDebounce(options);
      const m = { ...prepareMessages(message, this.maxMessageBytes)[0]!, delayMs: 0, uniqueKey: null };
      return this.dialect.write((w) => sendDebounced(w, queue, m, d));
    });
  }

  /** Runs a validated send (a dialect may first try a faster way). */
  protected sendPrepared(queue: string, prepared: PreparedMessage[], at: send.SendAt): Promise<number[]> {
    return this.sendWrite((w) => seqsOf(w, queue, prepared, at));
  }

  /** Runs a send or publish in a write (a dialect may retry one that met a stale view). */
  protected sendWrite<T>(verb: (w: WriteScope) => Verb<T>): Promise<T> {
    return this.dialect.write(verb);
  }

  // (end of send)

  // --- queues: queues and subscriptions: create, delete, list, stats, pause, subscribe, filters, reaping ---

  // (end of queues)

  // --- topics: declared and log topics: declare, read, ack, lease, nack, stats ---

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

function* seqsOf(w: WriteScope, queue: string, prepared: PreparedMessage[], at: send.SendAt): Verb<number[]> {
  return (yield* send.send(w, queue, prepared, at)).seqs;
}

function* publishOne(
  w: WriteScope,
  topic: string,
  prepared: PreparedMessage[],
  at: send.SendAt,
): Verb<PublishResult> {
  return (yield* send.send(w, topic, prepared, at, true)).published[0]!;
}
