import type { Message } from "../../contract/types.js";
import { answerBytes } from "../answer-budget.js";
import { leaseMs } from "../lease.js";
import { deliveredMessage } from "../message-row.js";
import type { QueueRow } from "../queue-config.js";
import { newLockToken } from "../tokens.js";
import type { PlainClaim } from "../waiters.js";
import type { NewRow } from "./send-rows.js";

/** A row a send stores already locked for a parked receiver: its lock token and lease end. */
export interface RowLock {
  token: string;
  lockedUntil: number;
}

/**
 * The rows of a plain send that a parked receiver's claim would take were it run right after the
 * commit, locked for it in the send's own statement. `floor` is the lowest priority among them: the
 * statement hands them over only if no claimable row of the queue has that priority or more (one
 * would come first, being older; a row its group holds back would not); otherwise it stores every
 * row claimable as usual.
 */
export interface HandOff {
  /** Per row of the send: its lock, or undefined when it stays claimable. */
  locks: (RowLock | undefined)[];
  floor: number;
  /** Indexes of the locked rows in the claim's order (priority, then seq). */
  order: number[];
}

/**
 * What `claim` would take of `rows` (all new, of `q`): the active ones in delivery order (priority,
 * then seq), up to its `max`, stopping after the row whose body and properties cross its answer
 * budget (`maxBytes`), each with its own token and the lease a claim gives. Undefined when none is active.
 */
export function handOffOf(
  q: QueueRow,
  rows: readonly NewRow[],
  claim: PlainClaim,
  now: number,
): HandOff | undefined {
  const active: number[] = [];
  for (let i = 0; i < rows.length; i++) if (rows[i]!.state === "active") active.push(i);
  if (active.length === 0) return undefined;
  // Stable: rows of one priority keep their order, as their seqs will.
  if (active.length > 1) active.sort((a, b) => rows[b]!.priority - rows[a]!.priority);
  const budget = answerBytes(claim.maxBytes);
  const locks: (RowLock | undefined)[] = new Array(rows.length);
  const order: number[] = [];
  let bytes = 0;
  let floor = 0;
  for (const i of active) {
    if (order.length >= claim.max || bytes >= budget) break;
    const r = rows[i]!;
    const lease = leaseMs(r.m.lockDurationMs, q.lock_duration_ms, claim.capMs);
    locks[i] = { token: newLockToken(), lockedUntil: now + lease };
    order.push(i);
    floor = r.priority;
    bytes += r.m.body.length + (r.m.propertiesJson === null ? 0 : Buffer.byteLength(r.m.propertiesJson));
  }
  return { locks, floor, order };
}

/** A buffer from this size on is not kept alive by a handed-off body that is a small view of it. */
const DETACH_FROM_BYTES = 1024 * 1024;

/**
 * The body the receiver gets: the sent bytes themselves, or a copy when they are a small part of a
 * large buffer (a served Send's bodies are decoded into its 32 MiB request's bytes): the receiver
 * may keep its message, and a view would keep the whole buffer with it.
 */
function handedBody(body: Buffer): Buffer {
  const whole = body.buffer.byteLength;
  return whole >= DETACH_FROM_BYTES && body.byteLength * 2 < whole ? Buffer.from(body) : body;
}

/** The messages the receiver gets, as its claim would have answered them. */
export function handedMessages(
  h: HandOff,
  rows: readonly NewRow[],
  ids: readonly number[],
  claim: PlainClaim,
): Message[] {
  return h.order.map((i) => {
    const r = rows[i]!;
    const lock = h.locks[i]!;
    const m = deliveredMessage({
      id: ids[i]!,
      priority: r.priority,
      locked_until: lock.lockedUntil,
      lock_token: lock.token,
      delivery_count: 1,
      enqueued_at: r.enqueuedAt,
      message_id: r.m.messageId,
      correlation_id: r.m.correlationId,
      reply_to: r.m.replyTo,
      group_id: r.m.groupId,
      content_type: r.m.contentType,
      subject: r.m.subject,
      properties: r.m.propertiesJson,
      body: handedBody(r.m.body),
      max_deliveries: r.m.maxDeliveries,
      lock_duration_ms: r.m.lockDurationMs,
    });
    if (claim.name !== undefined) m.queue = claim.name;
    return m;
  });
}
