import type { TopicBacklog } from "../contract/topic-service.js";
import type { MessageState } from "../contract/types.js";
import type { SubscriptionRow } from "./subscription-rows.js";

/** One group of a task subscription's deliveries by state. */
export interface DeliveryCount {
  topic: string;
  subscription: string;
  state: MessageState;
  n: number;
  oldest: number | null;
}

/** The backlog of each task subscription (zeros for an idle one), from the grouped delivery counts. */
export function topicBacklog(subs: SubscriptionRow[], counts: DeliveryCount[]): TopicBacklog[] {
  const byKey = new Map<string, DeliveryCount[]>();
  for (const c of counts) {
    const key = `${c.topic}\u0000${c.subscription}`;
    const list = byKey.get(key);
    if (list) list.push(c);
    else byKey.set(key, [c]);
  }
  return subs.map((s) => {
    const b: TopicBacklog = {
      topic: s.topic,
      subscription: s.name,
      task: s.task ?? "",
      queue: s.target_queue ?? "",
      paused: s.paused === 1,
      durable: s.durable !== 0,
      pending: 0,
      running: 0,
      dead: 0,
    };
    let oldest: number | undefined;
    for (const c of byKey.get(`${s.topic}\u0000${s.name}`) ?? []) {
      const n = Number(c.n);
      if (c.state === "active" || c.state === "scheduled" || c.state === "deferred") {
        b.pending += n;
        const o = c.oldest === null ? undefined : Number(c.oldest);
        if (o !== undefined && (oldest === undefined || o < oldest)) oldest = o;
      } else if (c.state === "locked") b.running += n;
      else if (c.state === "dead_lettered") b.dead += n;
    }
    if (oldest !== undefined) b.oldestPendingAt = oldest;
    return b;
  });
}
