import type { Delivery, PublishResult } from "../../contract/topic-service.js";
import type { FilterMessage } from "../../filter/index.js";
import { byCreation, taskDelivery } from "../fanout.js";
import { filterMessage } from "../filters.js";
import type { PreparedMessage } from "../outgoing.js";
import type { QueueRow } from "../queue-config.js";
import type { Target } from "../subscription-rows.js";
import type { Origin, SendTiming, Stored } from "./send-rows.js";

/** A filter that failed at run time (reported once the send commits). */
export interface FilterFailure {
  topic: string;
  subscription: string;
  err: string;
}

/** One copy of a message a topic's subscription takes. */
export interface Copy {
  /** The message's index in the send. */
  i: number;
  queue: string;
  m: PreparedMessage;
  kind: "queue" | "task";
  sub: string;
  origin?: Origin;
}

/** Whether a subscription takes a copy: not paused, and its filter says yes (fail-closed). */
function accepts(t: Target, input: FilterMessage, failures: FilterFailure[]): boolean {
  if (t.paused) return false;
  if (!t.filter) return true;
  return t.filter.matches(input, (err) =>
    failures.push({ topic: t.topic, subscription: t.name, err: err.message }),
  );
}

/** The delivery time of `m`: the send's, or later by the message's own delay. */
export function deliveryTime(m: PreparedMessage, t: SendTiming): number {
  return m.delayMs > 0 ? Math.max(t.visibleAt, t.now + m.delayMs) : t.visibleAt;
}

/**
 * Routes each message of a publish through the topic's subscriptions (in their order): a copy per
 * queue subscription, a job per task subscription whose filter takes it; `toLog[i]` when an active
 * log subscription takes message `i`.
 */
export function route(
  topic: string,
  targets: readonly Target[],
  messages: readonly PreparedMessage[],
  t: SendTiming,
  failures: FilterFailure[],
): { copies: Copy[]; toLog: boolean[] } {
  const copies: Copy[] = [];
  const toLog = messages.map(() => false);
  messages.forEach((m, i) => {
    const visibleAt = deliveryTime(m, t);
    // One filter input per message: the subscriptions' filters share its decoded body.
    const input = filterMessage(m, t.now, visibleAt);
    for (const x of targets) {
      if (!accepts(x, input, failures)) continue;
      if (x.kind === "queue") copies.push({ i, queue: x.name, m, kind: "queue", sub: x.name });
      else if (x.kind === "task") {
        copies.push({
          i,
          queue: x.queue ?? "",
          m: taskDelivery(m, x),
          kind: "task",
          sub: x.name,
          origin: { topic, subscription: x.name },
        });
      } else toLog[i] = true;
    }
  });
  return { copies, toLog };
}

/**
 * What a publish made of message `i`: a delivery per copy stored or answered by a duplicate, in
 * the subscriptions' creation order. `seq` is the last copy's seq (0 when none), `conflict` when a
 * copy met a dedup conflict.
 */
export function deliveries(
  i: number,
  copies: readonly Copy[],
  rows: readonly QueueRow[],
  stored: Stored,
  targets: readonly Target[] | undefined,
): { result: PublishResult; seq: number; conflict: boolean } {
  const result: PublishResult = { deliveries: [] };
  let seq = 0;
  let conflict = false;
  copies.forEach((k, n) => {
    if (k.i !== i) return;
    const s = stored[n]!;
    if (s === 0) {
      conflict = true;
      return;
    }
    seq = Math.abs(s);
    const d: Delivery = { subscription: k.sub, kind: k.kind, queue: rows[n]!.name, seqNumber: seq };
    if (s < 0) d.duplicate = true;
    result.deliveries.push(d);
  });
  if (targets) byCreation(result.deliveries, targets as Target[]);
  return { result, seq, conflict };
}
