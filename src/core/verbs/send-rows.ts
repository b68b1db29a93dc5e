import { createHash } from "node:crypto";
import { GroupRequiredError } from "../../contract/errors.js";
import type { PreparedMessage } from "../outgoing.js";
import { type Ops, STEP_ITEMS, type Verb } from "../port.js";
import type { QueueRow } from "../queue-config.js";

/** When a send delivers: the transaction's time, the requested delivery time, and the request's TTL. */
export interface SendTiming {
  now: number;
  /** The delivery time: `now` for an immediate send. */
  visibleAt: number;
  /** Per-message TTL of the request (0 = none). */
  ttlMs: number;
}

/** Where a message was routed from: the topic and task subscription of a job delivery. */
export interface Origin {
  topic: string;
  subscription: string;
}

/** One `messages` row a send stores: the message and the values the broker's rules gave it. */
export interface NewRow {
  queue: QueueRow;
  m: PreparedMessage;
  state: "active" | "scheduled";
  visibleAt: number;
  enqueuedAt: number;
  /** 0: never expires. */
  expiresAt: number;
  priority: number;
  origin: Origin | undefined;
}

/** A dedup row: the key (the message id, else the body's hash) and the body's hash. */
export interface DedupKey {
  key: string;
  hash: string;
}

/**
 * The row of `m` sent to `queue`: delayed by its own delay, its TTL anchored at the delivery time
 * and capped by the queue's default.
 */
export function newRow(queue: QueueRow, m: PreparedMessage, t: SendTiming, origin?: Origin): NewRow {
  const visibleAt = m.delayMs > 0 ? Math.max(t.visibleAt, t.now + m.delayMs) : t.visibleAt;
  let ttl = t.ttlMs;
  if (queue.default_ttl_ms > 0 && (ttl <= 0 || ttl > queue.default_ttl_ms)) ttl = queue.default_ttl_ms;
  return {
    queue,
    m,
    state: visibleAt > t.now ? "scheduled" : "active",
    visibleAt,
    enqueuedAt: t.now,
    expiresAt: ttl > 0 ? visibleAt + ttl : 0,
    // strict_fifo delivers in sequence order only: priority would break it, so it is not stored.
    priority: queue.ordering_mode === "strict_fifo" ? 0 : m.priority,
    origin,
  };
}

/** Whether storing the row needs a look first (a unique key or a dedup window). */
function checked(r: NewRow): boolean {
  return r.m.uniqueKey !== null || r.queue.dedup_window_ms > 0;
}

/**
 * Whether a send of `messages` to `queue` stores plain rows: no look first, and no ordering that
 * concurrent senders must respect (a dialect may then store them in one statement, unlocked).
 */
export function plainSend(queue: QueueRow, messages: readonly PreparedMessage[]): boolean {
  if (queue.dedup_window_ms > 0 || queue.ordering_mode !== "standard") return false;
  for (const m of messages) if (m.groupId !== null || m.uniqueKey !== null) return false;
  return true;
}

/** Refuses a row without the group its queue requires. */
export function checkGroups(rows: readonly NewRow[]): void {
  for (const r of rows) {
    if (r.queue.ordering_mode === "group_fifo" && r.m.groupId === null) throw new GroupRequiredError();
  }
}

function sha256(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}

/** The dedup key of each row of a queue with a dedup window (one hash per message body). */
export function dedupKeys(rows: readonly NewRow[]): (DedupKey | undefined)[] {
  let hashes: Map<PreparedMessage, string> | undefined;
  return rows.map((r) => {
    if (r.queue.dedup_window_ms <= 0) return undefined;
    hashes ??= new Map();
    let hash = hashes.get(r.m);
    if (hash === undefined) {
      hash = sha256(r.m.body);
      hashes.set(r.m, hash);
    }
    return { key: r.m.messageId ?? hash, hash };
  });
}

/**
 * What storing a row did, one number per row: the new row's seq (> 0); minus the seq of the live
 * message or dedup hit that answered instead (< 0); 0 for a dedup conflict (same id, another body).
 */
export type Stored = number[];

/** Whether concurrent senders of the row must be ordered (ids in commit order, or a key checked). */
function ordered(r: NewRow): boolean {
  return (
    r.queue.ordering_mode !== "standard" ||
    r.m.groupId !== null ||
    r.m.uniqueKey !== null ||
    r.queue.dedup_window_ms > 0
  );
}

/**
 * Stores the rows in order, after the group rule and the order of concurrent senders. A row with a
 * unique key answers with the live message holding the key; a row of a queue with a dedup window
 * answers with the message it repeats within the window (or conflicts when the body differs). Runs
 * of rows that need no look are stored together.
 */
export function* storeRows(rows: readonly NewRow[]): Verb<Stored> {
  checkGroups(rows);
  const dedup = dedupKeys(rows);
  if (rows.some(ordered)) yield (o: Ops) => o.send.serialize(rows, dedup);
  const out: Stored = new Array(rows.length);
  // Rows from..i-1 need no look: stored together before the next row that does (or at the end).
  // One loop, no nested generator: this is every send's path.
  let from = 0;
  for (let i = 0; i <= rows.length; i++) {
    const r = rows[i];
    if (r !== undefined && !checked(r)) continue;
    if (i - from === 1) {
      const one = rows[from]!;
      out[from] = (yield (o: Ops) => o.send.insert(one)) as number;
    } else if (i > from) {
      // At most STEP_ITEMS rows a statement: a long write may let the event loop turn between them.
      for (let at = from; at < i; at += STEP_ITEMS) {
        const end = Math.min(i, at + STEP_ITEMS);
        const run = at === 0 && end === rows.length ? rows : rows.slice(at, end);
        const ids = (yield (o: Ops) => o.send.insertMany(run)) as number[];
        for (let k = 0; k < ids.length; k++) out[at + k] = ids[k]!;
      }
    }
    if (r === undefined) break;
    from = i + 1;
    const q = r.queue.name;
    const uniqueKey = r.m.uniqueKey;
    if (uniqueKey !== null) {
      const live = (yield (o: Ops) => o.send.findLive(q, uniqueKey)) as number | undefined;
      if (live !== undefined) {
        out[i] = -live;
        continue;
      }
    }
    const d = dedup[i];
    if (d !== undefined) {
      const since = r.enqueuedAt - r.queue.dedup_window_ms;
      const seen = (yield (o: Ops) => o.send.findDedup(q, d.key, since)) as DedupHit | undefined;
      if (seen) {
        out[i] = seen.hash === d.hash ? -seen.seq : 0;
        continue;
      }
    }
    out[i] = (yield (o: Ops) => o.send.insert(r, d)) as number;
  }
  return out;
}

/** A dedup row seen within the window. */
export interface DedupHit {
  hash: string;
  seq: number;
}
