import assert from "node:assert/strict";
import type { Broker } from "../../src/contract/broker.js";
import type { ErrorCode, MqliteError } from "../../src/contract/errors.js";
import type { Message, QueueStats } from "../../src/contract/types.js";

/** Asserts that `p` rejects with an instance of `cls` carrying the wire code `code`. */
export async function fails(
  p: Promise<unknown>,
  cls: abstract new (...args: never[]) => MqliteError,
  code: ErrorCode,
  what?: string,
): Promise<void> {
  const about = what ? `${what}: ` : "";
  await assert.rejects(
    p,
    (err: unknown) => {
      assert.ok(err instanceof cls, `${about}expected ${cls.name}, got ${String(err)}`);
      assert.equal(err.code, code, what);
      return true;
    },
    what,
  );
}

/** A message claimed in peek-lock mode (with its lock token). */
export type Locked = Message & { lockToken: string };

/** Receives exactly one message and returns it with its lock token. */
export async function receiveOne(b: Broker, queue: string): Promise<Locked> {
  const got = await b.receive(queue);
  assert.equal(got.length, 1, `expected one message from ${queue}, got ${got.length}`);
  const m = got[0]!;
  assert.ok(m.lockToken, "a peek-lock receive carries a lock token");
  return m as Locked;
}

/** The sequence numbers of `messages`. */
export const seqs = (messages: Message[]): number[] => messages.map((m) => m.seqNumber);

/** The bodies of `messages` as UTF-8 strings. */
export const bodies = (messages: Message[]): string[] => messages.map((m) => m.body.toString());

/** Everything stored in a queue, as the interface shows it: stats and every message. */
export async function snapshot(
  b: Broker,
  queue: string,
): Promise<{ stats: QueueStats; messages: Message[] }> {
  return { stats: await b.stats(queue), messages: await b.peek(queue, { max: 1000 }) };
}

/** Everything the broker holds: queues, subscriptions and every queue's messages. */
export async function snapshotAll(b: Broker): Promise<unknown> {
  const queues = await b.listQueues();
  const messages: Record<string, Message[]> = {};
  for (const q of queues) messages[q.name] = await b.peek(q.name, { max: 1000 });
  return { queues, subscriptions: await b.listSubscriptions(), messages };
}

/** Sends `n` messages (bodies `${prefix}0..n-1`), then receives and rejects each: `n` dead letters. */
export async function deadLetter(b: Broker, queue: string, n: number, prefix = "d"): Promise<number[]> {
  const sent = await b.send(
    queue,
    Array.from({ length: n }, (_, i) => ({ body: `${prefix}${i}` })),
  );
  const got = await b.receive(queue, { maxMessages: n });
  assert.equal(got.length, n);
  for (const m of got) await b.reject(queue, m.seqNumber, m.lockToken!);
  return sent;
}

/** Lets an async operation (a long-poll) reach its parked state. */
export function settle(ms = 20): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
