import assert from "node:assert/strict";
import type { Broker } from "../../src/contract/broker.js";
import type { MessageRow } from "../../src/core/message-row.js";
import { PEEK_STEP_BYTES } from "../../src/core/verbs/claim.js";

const MiB = 1024 * 1024;

/** A dialect's claim statements, whose `peek` is spied on (synchronous on SQLite, async on PostgreSQL). */
interface PeekingOps {
  prototype: { peek(a: never): MessageRow[] | Promise<MessageRow[]> };
}

/**
 * Counts the rows each `peek` of `ops` returns, as it stays (synchronous or not); `restore` puts
 * the statement back.
 */
export function spyOnPeek(ops: PeekingOps): { read: number[]; restore(): void } {
  const read: number[] = [];
  const peek = ops.prototype.peek;
  ops.prototype.peek = function (this: unknown, a: never) {
    const out = peek.call(this, a);
    if (out instanceof Promise) {
      return out.then((rows) => {
        read.push(rows.length);
        return rows;
      });
    }
    read.push(out.length);
    return out;
  };
  return { read, restore: () => (ops.prototype.peek = peek) };
}

/**
 * The statements of one peek read 32 rows of 1 MiB in all, in steps of `PEEK_STEP_BYTES` (each
 * stopping at the row that crosses it).
 */
function assertSteps(read: number[], what: string): void {
  assert.equal(
    read.reduce((a, b) => a + b, 0),
    32,
    `${what}: ${read}`,
  );
  assert.deepEqual(read, Array(32 / (PEEK_STEP_BYTES / MiB)).fill(PEEK_STEP_BYTES / MiB), what);
}

/**
 * Sends `n` (more than 33) messages of 1 MiB to the existing queue "q", locks the first, and
 * checks that each Peek's store read stopped at the message crossing the 32 MiB budget.
 */
export async function assertPeekReadsWithinBudget(b: Broker, read: number[], n: number): Promise<void> {
  const body = Buffer.alloc(MiB, 7);
  const seqs: number[] = [];
  for (let i = 0; i < n; i++) seqs.push(...(await b.send("q", { body, properties: { i: String(i) } })));
  // One of them locked: a peek of every state merges the states in sequence order.
  await b.receive("q", { maxMessages: 1 });
  const all = await b.peek("q", { max: 1000 });
  assert.equal(all.length, 32, "32 MiB and a little properties: the 32nd crosses the budget");
  assert.deepEqual(
    all.map((m) => m.seqNumber),
    seqs.slice(0, 32),
  );
  assert.equal(all[0]!.state, "locked");
  assert.equal(all[1]!.body.length, MiB);
  assertSteps(read.splice(0), "the rows after it were never read");
  const active = await b.peek("q", { max: 1000, state: "active", fromSeq: seqs[1] });
  assert.deepEqual(
    active.map((m) => m.seqNumber),
    seqs.slice(1, 33),
  );
  assertSteps(read.splice(0), "from a sequence number, of one state");
  const few = await b.peek("q", { max: 3, fromSeq: seqs[10] });
  assert.deepEqual(
    few.map((m) => m.seqNumber),
    seqs.slice(10, 13),
    "the count first",
  );
}
