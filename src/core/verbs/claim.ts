import { NotFoundError } from "../../contract/errors.js";
import type { ClaimGate } from "../../contract/job-service.js";
import type { MaxBytes, Message, MessageState, ReceiveMode } from "../../contract/types.js";
import { ANSWER_BUDGET_BYTES, answerBytes } from "../answer-budget.js";
import { decodeMessages, encodeMessages } from "../message-codec.js";
import { type MessageRow, peekedMessage } from "../message-row.js";
import { ask, type Verb, type WriteScope } from "../port.js";
import type { QueueRow } from "../queue-config.js";
import { type ClaimGateSession, type GateSession, openGates } from "./claim-gates.js";

export type { ClaimGateSession };

/** At most this many messages per receive. */
export const MAX_RECEIVE = 256;
/** A long-poll waits at most this long (ms). */
export const MAX_WAIT_MS = 20_000;
/** At most this many messages per peek, and how many when not said. */
export const MAX_PEEK = 1000;
export const DEFAULT_PEEK = 32;

/** A long-poll's wait: a whole number of ms from 0 to `MAX_WAIT_MS` (anything else counts as 0). */
export function waitTime(waitMs: number | undefined): number {
  return Math.min(Math.max(0, Math.trunc(waitMs ?? 0) || 0), MAX_WAIT_MS);
}

/** How long a receive attempt's record replays at least (ms). */
const ATTEMPT_MIN_TTL_MS = 300_000;

/** One claim statement's request. */
export interface ClaimRequest {
  /** The queue's row, as `queue` or `queues` answered it. */
  queue: QueueRow;
  /** At most this many (0: none, but a dialect caching rows still confirms `queue` is current). */
  max: number;
  mode: ReceiveMode;
  now: number;
  /** Caps each lease (ms; 0: no cap). */
  capMs: number;
  /** Holds back the subjects it excludes, and hears of each claimed subject. */
  gates?: ClaimGateSession;
  /**
   * Bytes of bodies and properties the answer may still take: the claim stops after the message
   * that crosses it (the receive's `maxBytes` for one queue; what is left of it across queues).
   */
  budget: number;
}

/**
 * The statements the claim verbs need (receive, receiveDeferred, receiveAny, peek: claiming with
 * ordering, priority, gates and long-polls).
 */
export interface ClaimOps {
  /** The queue's row, undefined when there is none. */
  queue(name: string): QueueRow | undefined;
  /** The rows of several queues, in the order asked (undefined where there is none). */
  queues(names: readonly string[]): (QueueRow | undefined)[];
  /**
   * Serialises this claim with concurrent ones where the dialect needs it (a strict queue's claims,
   * a gate's counts, a receive attempt); a single-writer dialect needs nothing.
   */
  serialize(a: {
    strict: readonly string[];
    gates: readonly string[];
    attempt?: { queue: string; id: string };
  }): void;
  /** The recorded answer of a receive attempt still replaying at `now`. */
  findAttempt(a: { queue: string; id: string; now: number }): string | undefined;
  /** Records a receive attempt's answer until `expiresAt`. */
  saveAttempt(a: { queue: string; id: string; response: string; now: number; expiresAt: number }): void;
  /**
   * Claims up to `max` messages of the queue in its head-of-line order (ordering mode, priority),
   * each with its own lock token and lease, stopping after the message whose body (and properties)
   * crosses `budget`. `receive-and-delete` deletes each claimed message (it frees its
   * line for the next one) and answers it without a lock.
   */
  claim(a: ClaimRequest): Message[];
  /**
   * Locks the given deferred messages of the queue (others are skipped), in the order asked,
   * stopping after the one whose body (and properties) crosses `budget`: the rest stay deferred,
   * for another call.
   */
  claimDeferred(a: { queue: QueueRow; seqs: readonly number[]; now: number; budget: number }): Message[];
  /** How many messages with this subject are locked, across every queue. */
  lockedCount(subject: string): number;
  /** A gate's stored token bucket. */
  bucket(key: string): { tokens: number; updatedAt: number } | undefined;
  /** Stores a gate's token bucket. */
  saveBucket(a: { key: string; tokens: number; now: number }): void;
  /**
   * Up to `max` rows of the queue from `from` on in sequence order, of one state or of every state,
   * stopping at the row whose body and properties (their lengths as JavaScript counts them, or
   * less) bring the total to `budget`: the rows after it are never read.
   */
  peek(a: { queue: string; state?: MessageState; from: number; max: number; budget: number }): MessageRow[];
}

/** What a claim across queues found, and when a gate-held subject may become claimable. */
export interface Claimed {
  messages: Message[];
  retryAt: number | undefined;
}

const QUEUE_NOT_FOUND = "mqlite: queue not found";

/** The reaper must wake by the earliest lease these claims took. */
function reportLeases(s: WriteScope, claimed: readonly Message[]): void {
  let earliest = Number.POSITIVE_INFINITY;
  for (const m of claimed) {
    if (m.lockToken && m.lockedUntil !== undefined && m.lockedUntil < earliest) earliest = m.lockedUntil;
  }
  if (earliest !== Number.POSITIVE_INFINITY) s.effects.leased(earliest);
}

export interface ReceiveInput {
  max: number;
  mode: ReceiveMode;
  attemptId: string | undefined;
  /** The answer's byte budget, asked when the claim runs (see `MaxBytes`). */
  maxBytes?: MaxBytes | undefined;
  /** Claims at most this many a statement (see `CLAIM_STEP_ITEMS`); all in one when undefined. */
  step?: number | undefined;
}

/**
 * Claims up to `c.max` messages in statements of at most `step`, each within what the ones before
 * it left of the budget; stops at the first that finds fewer than it asked for. At least one
 * statement runs, even for none (a dialect caching rows confirms the queue is current).
 */
function* claimInSteps(c: ClaimRequest, step: number): Verb<Message[]> {
  const out: Message[] = [];
  let budget = c.budget;
  for (;;) {
    const want = Math.min(step, c.max - out.length);
    const got = yield* ask((o) => o.claim.claim({ ...c, max: want, budget }));
    for (const m of got) out.push(m);
    if (got.length < want || out.length >= c.max) return out;
    budget -= claimedBytes(got);
    if (budget <= 0) return out;
  }
}

/** What claimed messages take of a claim's budget: their bodies and properties, as the claims count them. */
function claimedBytes(messages: readonly Message[]): number {
  let n = 0;
  for (const m of messages) n += m.body.length + propertiesLength(m.properties);
  return n;
}

/**
 * `receive`'s claim: up to `max` messages of one queue. A paused queue yields nothing. A receive
 * attempt replays its recorded answer, so a retried request never claims twice.
 */
export function* receive(s: WriteScope, name: string, r: ReceiveInput): Verb<Message[]> {
  const q = yield* ask((o) => o.claim.queue(name));
  if (!q) throw new NotFoundError(QUEUE_NOT_FOUND);
  const attemptId = r.attemptId;
  if (attemptId) {
    const strict = q.ordering_mode === "strict_fifo" ? [q.name] : [];
    yield* ask((o) => o.claim.serialize({ strict, gates: [], attempt: { queue: q.name, id: attemptId } }));
    const seen = yield* ask((o) => o.claim.findAttempt({ queue: q.name, id: attemptId, now: s.now }));
    if (seen !== undefined) return decodeMessages(seen);
  } else if (q.ordering_mode === "strict_fifo") {
    yield* ask((o) => o.claim.serialize({ strict: [q.name], gates: [] }));
  }
  const max = q.paused ? 0 : r.max;
  const request = { queue: q, max, mode: r.mode, now: s.now, capMs: 0, budget: answerBytes(r.maxBytes) };
  const out = r.step ? yield* claimInSteps(request, r.step) : yield* ask((o) => o.claim.claim(request));
  reportLeases(s, out);
  if (attemptId && out.length > 0) {
    const response = encodeMessages(out);
    const expiresAt = s.now + Math.max(q.lock_duration_ms, ATTEMPT_MIN_TTL_MS);
    yield* ask((o) => o.claim.saveAttempt({ queue: q.name, id: attemptId, response, now: s.now, expiresAt }));
  }
  return out;
}

/** `receive` as a long-poll's claim. */
export function* receiveClaim(s: WriteScope, name: string, r: ReceiveInput): Verb<Claimed> {
  return { messages: yield* receive(s, name, r), retryAt: undefined };
}

export interface ReceiveAnyInput {
  queues: readonly string[];
  max: number;
  gates: readonly ClaimGate[];
  capMs: number;
  /** The answer's byte budget, asked when the claim runs (see `MaxBytes`). */
  maxBytes?: MaxBytes | undefined;
  /** Claims at most this many a statement (see `CLAIM_STEP_ITEMS`); all in one when undefined. */
  step?: number | undefined;
}

/** The length of a message's properties as stored (their JSON), as the claims count them. */
function propertiesLength(properties: Record<string, string> | undefined): number {
  return properties ? JSON.stringify(properties).length : 0;
}

/**
 * `receiveAny`'s claim: up to `max` messages across the queues, in the order given (a missing or
 * paused queue is skipped). Gates hold back their subjects; the answer says when a held-back one
 * may become claimable.
 */
export function* receiveAny(s: WriteScope, r: ReceiveAnyInput): Verb<Claimed> {
  const rows = yield* ask((o) => o.claim.queues(r.queues));
  const gated = r.gates.length > 0;
  const strict: string[] = [];
  for (const q of rows) if (q?.ordering_mode === "strict_fifo") strict.push(q.name);
  if (strict.length > 0 || gated) {
    const subjects = r.gates.map((g) => g.subject);
    yield* ask((o) => o.claim.serialize({ strict, gates: subjects }));
  }
  const session: GateSession | undefined = gated ? yield* openGates(r.gates, s.now) : undefined;
  const messages: Message[] = [];
  // One answer's budget across the queues: each claim gets what the ones before it left.
  let budget = answerBytes(r.maxBytes);
  for (const [k, q] of rows.entries()) {
    if (!q) continue;
    const max = q.paused ? 0 : r.max - messages.length;
    const request = {
      queue: q,
      max,
      mode: "peek-lock" as const,
      now: s.now,
      capMs: r.capMs,
      gates: session,
      budget,
    };
    const got = r.step ? yield* claimInSteps(request, r.step) : yield* ask((o) => o.claim.claim(request));
    const name = r.queues[k]!;
    // What is left of the budget matters only to a later queue (a worker of one queue never
    // writes its messages' properties out again to count them).
    const later = k < rows.length - 1;
    for (const m of got) {
      m.queue = name;
      messages.push(m);
    }
    if (later) budget -= claimedBytes(got);
    if (messages.length >= r.max || budget <= 0) break;
  }
  reportLeases(s, messages);
  if (session) yield* session.finish();
  return { messages, retryAt: session?.retryAt() };
}

/**
 * `receiveDeferred`: locks the given deferred messages (others are skipped), within `maxBytes`,
 * at most `step` sequence numbers a statement (see `CLAIM_STEP_ITEMS`; all at once when undefined).
 */
export function* receiveDeferred(
  s: WriteScope,
  name: string,
  seqs: readonly number[],
  maxBytes: number = ANSWER_BUDGET_BYTES,
  step: number = seqs.length,
): Verb<Message[]> {
  const q = yield* ask((o) => o.claim.queue(name));
  if (!q) throw new NotFoundError(QUEUE_NOT_FOUND);
  const out: Message[] = [];
  let budget = maxBytes;
  // A step may lock fewer than it was given (a number not deferred is skipped): only the budget ends it early.
  for (let from = 0; from < seqs.length && budget > 0; from += step) {
    const part = step >= seqs.length ? seqs : seqs.slice(from, from + step);
    const got = yield* ask((o) => o.claim.claimDeferred({ queue: q, seqs: part, now: s.now, budget }));
    for (const m of got) out.push(m);
    if (from + step < seqs.length) budget -= claimedBytes(got);
  }
  reportLeases(s, out);
  return out;
}

/**
 * How many bytes of bodies and properties one statement of a peek reads at most (the row that
 * crosses it is kept): a 32 MiB answer is read in steps, between which a dialect whose reads hold
 * the event loop (SQLite) lets it turn (`ReadOptions.sliced`). A step of 2 MiB (two rows of 1 MiB)
 * took 20-35 ms on a virtual machine whose page faults cost 10 µs (each row's Buffer is mapped
 * afresh under `npm start`'s glibc setting); a step of 1 MiB, about half.
 */
export const PEEK_STEP_BYTES = 1024 * 1024;

/**
 * `peek`: the rows in sequence order, every field but the lock token, within the answer's budget
 * (`maxBytes`, at most `ANSWER_BUDGET_BYTES`).
 * Each step reads on from the last row it kept; a message settled between two steps is simply not
 * in the answer, as it would not be in a later peek.
 */
export function* peek(
  queue: string,
  state: MessageState | undefined,
  from: number,
  max: number,
  maxBytes: number = ANSWER_BUDGET_BYTES,
): Verb<Message[]> {
  const out: Message[] = [];
  let left = maxBytes;
  let next = from;
  while (out.length < max && left > 0) {
    const budget = Math.min(left, PEEK_STEP_BYTES);
    const want = max - out.length;
    const rows = yield* ask((o) => o.claim.peek({ queue, state, from: next, max: want, budget }));
    let bytes = 0;
    for (const row of rows) {
      out.push(peekedMessage(row));
      bytes += row.body.length + (row.properties?.length ?? 0);
    }
    left -= bytes;
    // Short of the step's budget: the statement stopped at `max` or at the queue's last row.
    if (rows.length === 0 || bytes < budget) break;
    next = (rows.at(-1) as MessageRow).id + 1;
  }
  return out;
}
