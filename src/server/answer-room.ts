import type { Context } from "hono";
import type { Broker } from "../contract/broker.js";
import { askedAnswerBytes } from "../contract/limits.js";
import type { MaxBytes, Message } from "../contract/types.js";
import { SLICED_DECODE_BYTES } from "../wire/index.js";
import type { ServerEnv } from "./env.js";
import type { LargeBodyBudget } from "./large-bodies.js";
import { whenWritten } from "./respond.js";

/** Bytes of bodies and properties any answer may take without room in the budget. */
export const ANSWER_ALLOWANCE_BYTES = SLICED_DECODE_BYTES;

/** What an answer lists: messages of a queue or of a topic's log. */
type Listed = Pick<Message, "body" | "properties">;

/** The bytes of messages' bodies and properties, about as the engine counts them against a budget. */
function answerBytesOf(messages: readonly Listed[]): number {
  let n = 0;
  for (const m of messages) {
    n += m.body.length;
    if (m.properties) for (const [k, v] of Object.entries(m.properties)) n += k.length + v.length + 6;
  }
  return n;
}

/**
 * The room one answer that lists messages (Receive, ReceiveAny, ReceiveDeferred, Peek, ReadTopic,
 * LeaseTopic) takes in the server's large-body budget. An answer is cut short rather than held back: any answer may take
 * `ANSWER_ALLOWANCE_BYTES`, and beyond it what the budget has free when its messages are read;
 * once they are, it keeps what they took (a message larger than its room is still sent whole:
 * one message at least) and gives the rest back; all of it once the answer is written. Eight
 * Peeks of 32 MiB at once took 280 MB over the server's baseline and held `/healthz` for a quarter
 * of a second; within the budget, the first reads its 32 MiB and the others one message each.
 */
export class AnswerRoom {
  /** Bytes held in the budget. */
  private held = 0;
  private released = false;

  constructor(private readonly budget: LargeBodyBudget) {}

  /**
   * The answer's byte budget now: the allowance plus what is free, up to `asked` (the request's
   * own `max_bytes`; ≤0 or absent: 32 MiB). Asked again (a long-poll's next claim), the room taken
   * before is given back first.
   */
  reserve = (asked?: number | null): number => {
    const want = askedAnswerBytes(asked);
    this.budget.giveBack(this.held);
    this.held = 0;
    if (this.released) return Math.min(want, ANSWER_ALLOWANCE_BYTES);
    this.held = this.budget.takeFree(want - ANSWER_ALLOWANCE_BYTES);
    return Math.min(want, ANSWER_ALLOWANCE_BYTES + this.held);
  };

  /** Holds what `messages` take beyond the allowance, until `release`; gives back the rest. */
  keep(messages: readonly Listed[]): void {
    if (this.released) return;
    const need = Math.max(0, answerBytesOf(messages) - ANSWER_ALLOWANCE_BYTES);
    if (need > this.held) this.budget.force(need - this.held);
    else this.budget.giveBack(this.held - need);
    this.held = need;
  }

  /** Whether it holds bytes of the budget (an answer beyond the allowance). */
  get holding(): boolean {
    return this.held > 0;
  }

  /** Gives everything back (the answer is written, or failed). */
  release = (): void => {
    this.released = true;
    this.budget.giveBack(this.held);
    this.held = 0;
  };
}

/**
 * The reads whose answers list messages, sized by an answer room each (`withAnswerRooms`), with
 * the position of their options argument.
 */
const LISTING = new Map<PropertyKey, number>([
  ["receive", 1],
  ["receiveAny", 1],
  ["receiveDeferred", 2],
  ["peek", 1],
  ["readTopic", 2],
  ["leaseTopic", 2],
]);

/** A broker whose reads take answer rooms (`withAnswerRooms`). */
export interface RoomedBroker {
  broker: Broker;
  /** Gives every room back once the answer is written (at once when they hold nothing). */
  releaseAfter(c: Context<ServerEnv>): void;
}

/** A `maxBytes` a caller gave, as a number (a function is asked now); undefined when none. */
const askedBytes = (m: MaxBytes | undefined) => (typeof m === "function" ? m() : m);

/**
 * `broker` with its reads that list messages (Receive, ReceiveAny, ReceiveDeferred, Peek,
 * ReadTopic, LeaseTopic) sized by an answer room each, taken from `budget`: for the RPCs that
 * answer them and for the MCP tools. The caller's own `maxBytes` is what the read asks for.
 */
export function withAnswerRooms(broker: Broker, budget: LargeBodyBudget): RoomedBroker {
  const rooms: AnswerRoom[] = [];
  const sized = new Proxy(broker, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      const at = LISTING.get(prop);
      if (at === undefined) return value.bind(target);
      return async (...args: unknown[]) => {
        const options = (args[at] ?? {}) as { maxBytes?: MaxBytes };
        const room = new AnswerRoom(budget);
        rooms.push(room);
        const asked = askedBytes(options.maxBytes);
        // A long-poll's room is taken when its messages are claimed (so not while it waits);
        // the others' at once.
        const long = prop === "receive" || prop === "receiveAny";
        args[at] = { ...options, maxBytes: long ? () => room.reserve(asked) : room.reserve(asked) };
        const messages = (await value.apply(target, args)) as Listed[];
        room.keep(messages);
        return messages;
      };
    },
  });
  const release = () => {
    for (const room of rooms) room.release();
  };
  return {
    broker: sized,
    releaseAfter(c) {
      if (rooms.some((r) => r.holding)) whenWritten(c, release);
      else release();
    },
  };
}
