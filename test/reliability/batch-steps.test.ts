// Batches that would hold the event loop on SQLite are long writes there, cut into steps with the
// loop turning between them, so a served broker keeps answering: a CompleteBatch settles
// SETTLE_STEP_ITEMS messages a step (each message its own statements; a step of 512 held a server
// for 20-30 ms), a Receive claims CLAIM_STEP_ITEMS a step (each message an update of its row, body
// included), a ReceiveDeferred locks as many a step, a deleteSettled deletes STEP_ITEMS rows a step.
// Every subject's results: test/conformance/cases/settlement.case.ts, receive-peek.case.ts,
// job-retention.case.ts.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import { CLAIM_STEP_ITEMS, MARK_STEP_ROWS, SETTLE_STEP_ITEMS, STEP_ITEMS } from "../../src/core/port.js";
import { openBroker } from "../../src/open.js";
import { SqliteClaimOps } from "../../src/store/sqlite/claim.js";
import { SqliteRecordOps } from "../../src/store/sqlite/message-records.js";
import { SqliteSettleOps } from "../../src/store/sqlite/settle.js";
import { tempDir } from "../support/temp.js";
import { countTurns } from "../support/turns.js";

type Step = { size: number; turns: number };

/**
 * Runs `fn` on a fresh broker with `proto[method]` made slow (5 ms a call: each step outlasts the
 * writer's 4 ms slice on any machine) and recorded: each call's item count and the loop's turns so far.
 */
async function withSlowSteps<P extends object>(
  file: string,
  proto: P,
  method: keyof P,
  size: (a: never) => number,
  fn: (b: Broker, steps: Step[]) => Promise<void>,
): Promise<void> {
  const b = await openBroker(file, { background: false, logger: silentLogger, synchronous: "off" });
  const turning = countTurns();
  const original = proto[method] as (...args: unknown[]) => unknown;
  const steps: Step[] = [];
  (proto as Record<keyof P, unknown>)[method] = function (this: unknown, a: never) {
    steps.push({ size: size(a), turns: turning.now() });
    const until = performance.now() + 5;
    while (performance.now() < until);
    return original.call(this, a);
  };
  try {
    await fn(b, steps);
  } finally {
    (proto as Record<keyof P, unknown>)[method] = original;
    turning.stop();
    await b.close();
  }
}

/** Each step came after at least one turn of the loop since the one before it. */
function assertTurnedBetween(steps: readonly Step[]): void {
  for (let k = 1; k < steps.length; k++)
    assert.ok(
      steps[k]!.turns > steps[k - 1]!.turns,
      `the loop did not turn between steps ${k} and ${k + 1} (${JSON.stringify(steps)})`,
    );
}

describe("reliability: large batches let the event loop turn", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  // 1,200 is a long write by its size; 300 (three steps) is one because it takes more than one step.
  for (const total of [1200, 300]) {
    it(`CompleteBatch settles ${total} messages ${SETTLE_STEP_ITEMS} a step, the loop turning between steps`, async () => {
      await withSlowSteps(
        tmp.file(`complete-${total}.db`),
        SqliteSettleOps.prototype,
        "completeBatch",
        (a: { items: unknown[] }) => a.items.length,
        async (b, steps) => {
          await b.createQueue("big", { lockDurationMs: 600_000 });
          await b.send(
            "big",
            Array.from({ length: total }, (_, k) => ({ body: `m${k}` })),
          );
          const locked = [];
          for (;;) {
            const got = await b.receive("big", { maxMessages: 256 });
            if (got.length === 0) break;
            locked.push(...got);
          }
          assert.equal(locked.length, total);
          const results = await b.completeBatch(
            "big",
            locked.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken! })),
          );
          assert.equal(results.filter((r) => r.ok).length, total);
          assert.equal(Math.max(...steps.map((s) => s.size)), SETTLE_STEP_ITEMS);
          assert.equal(steps.length, Math.ceil(total / SETTLE_STEP_ITEMS));
          assertTurnedBetween(steps);
          assert.equal((await b.stats("big")).total, 0);
        },
      );
    });
  }

  it(`Receive of 256 claims ${CLAIM_STEP_ITEMS} a step, the loop turning between steps`, async () => {
    await withSlowSteps(
      tmp.file("receive.db"),
      SqliteClaimOps.prototype,
      "claim",
      (a: { max: number }) => a.max,
      async (b, steps) => {
        await b.createQueue("big", { lockDurationMs: 600_000 });
        const sent = await b.send(
          "big",
          Array.from({ length: 300 }, (_, k) => ({ body: `m${k}` })),
        );
        steps.length = 0;
        const got = await b.receive("big", { maxMessages: 256 });
        assert.deepEqual(
          got.map((m) => m.seqNumber),
          sent.slice(0, 256),
        );
        assert.deepEqual(
          steps.map((s) => s.size),
          Array(256 / CLAIM_STEP_ITEMS).fill(CLAIM_STEP_ITEMS),
        );
        assertTurnedBetween(steps);
        steps.length = 0;
        const rest = await b.receive("big", { maxMessages: 256, mode: "receive-and-delete" });
        assert.deepEqual(
          rest.map((m) => m.seqNumber),
          sent.slice(256),
        );
        assert.deepEqual(
          steps.map((s) => s.size),
          [CLAIM_STEP_ITEMS],
          "a step that finds fewer than it asked for is the last",
        );
        const stats = await b.stats("big");
        assert.deepEqual([stats.locked, stats.active], [256, 0]);
      },
    );
  });

  it(`ReceiveDeferred of 300 locks ${CLAIM_STEP_ITEMS} a step, the loop turning between steps`, async () => {
    await withSlowSteps(
      tmp.file("receive-deferred.db"),
      SqliteClaimOps.prototype,
      "claimDeferred",
      (a: { seqs: readonly number[] }) => a.seqs.length,
      async (b, steps) => {
        await b.createQueue("later", { lockDurationMs: 600_000 });
        const sent = await b.send(
          "later",
          Array.from({ length: 300 }, (_, k) => ({ body: `m${k}` })),
        );
        for (let k = 0; k < 2; k++)
          for (const m of await b.receive("later", { maxMessages: 150 }))
            await b.defer("later", m.seqNumber, m.lockToken!);
        steps.length = 0;
        const got = await b.receiveDeferred("later", sent);
        assert.deepEqual(
          got.map((m) => m.seqNumber),
          sent,
        );
        assert.deepEqual(
          steps.map((s) => s.size),
          [64, 64, 64, 64, 44],
        );
        assertTurnedBetween(steps);
      },
    );
  });

  it(`ReceiveAny of 256 claims ${CLAIM_STEP_ITEMS} a step in each queue, the loop turning between steps`, async () => {
    await withSlowSteps(
      tmp.file("receive-any.db"),
      SqliteClaimOps.prototype,
      "claim",
      (a: { max: number }) => a.max,
      async (b, steps) => {
        const sent: number[] = [];
        for (const [queue, n] of [
          ["one", 100],
          ["two", 200],
        ] as const) {
          await b.createQueue(queue, { lockDurationMs: 600_000 });
          sent.push(
            ...(await b.send(
              queue,
              Array.from({ length: n }, (_, k) => ({ body: `${queue}${k}` })),
            )),
          );
        }
        steps.length = 0;
        const got = await b.receiveAny(["one", "two"], { maxMessages: 256 });
        assert.deepEqual(
          got.map((m) => m.seqNumber),
          sent.slice(0, 256),
        );
        // "one": 64, then 36 of 64 asked (its last); "two": 64, 64, then the 28 left of 256.
        assert.deepEqual(
          steps.map((s) => s.size),
          [64, 64, 64, 64, 28],
        );
        assertTurnedBetween(steps);
      },
    );
  });

  it(`deleteSettled deletes ${STEP_ITEMS} rows a step past its first, the loop turning between steps`, async () => {
    await withSlowSteps(
      tmp.file("delete-settled.db"),
      SqliteRecordOps.prototype,
      "deleteSettled",
      (a: { limit: number }) => a.limit,
      async (b, steps) => {
        await b.createQueue("big", { lockDurationMs: 600_000 });
        // 1,300 of each subject, interleaved: each step of "a" passes over as many rows of "b".
        await b.send(
          "big",
          Array.from({ length: 2600 }, (_, k) => ({ body: `m${k}`, subject: k % 2 ? "b" : "a" })),
        );
        for (;;) {
          const got = await b.receive("big", { maxMessages: 256 });
          if (got.length === 0) break;
          const done = await b.completeBatch(
            "big",
            got.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken!, retainMs: 3_600_000 })),
          );
          assert.ok(done.every((r) => r.ok));
        }
        const newest = async () =>
          (await b.browse({ queues: ["big"], subject: "a", order: "settled", limit: 1000 })).map(
            (r) => r.seqNumber,
          );
        const kept = (await newest()).slice(0, 100);
        steps.length = 0;
        const n = await b.deleteSettled("big", { states: ["completed"], subject: "a", keepNewest: 100 });
        assert.equal(n, 1200);
        assert.deepEqual(await newest(), kept, "the newest 100 by settlement are the ones left");
        assert.equal((await b.stats("big")).total, 1400, "the other subject's 1,300 are all there");
        // A first step with the other writes (its mark from 1,300 keys, one read), then a long
        // write of two steps: 512 + 512 + 176.
        assert.deepEqual(
          steps.map((s) => s.size),
          [STEP_ITEMS, STEP_ITEMS, STEP_ITEMS],
        );
        assertTurnedBetween(steps.slice(1));

        // Without a count: a first step of 512 with the other writes, the rest a long write (512,
        // then 376 of 512 asked), then one step each for the other settled states (none).
        steps.length = 0;
        assert.equal(await b.deleteSettled("big", {}), 1400, "every state, in steps");
        assert.equal((await b.stats("big")).total, 0);
        assert.deepEqual(
          steps.map((s) => s.size),
          Array(5).fill(STEP_ITEMS),
        );
        assertTurnedBetween(steps.slice(1));
      },
    );
  });

  it(`retention by count reads its rows' keys ${MARK_STEP_ROWS} a step, the loop turning between steps`, async () => {
    await withSlowSteps(
      tmp.file("kept-mark.db"),
      SqliteRecordOps.prototype,
      "settledKeys",
      (a: { limit: number }) => a.limit,
      async (b, steps) => {
        await b.createQueue("big", { lockDurationMs: 600_000 });
        const total = 2 * MARK_STEP_ROWS + 104;
        await b.send(
          "big",
          Array.from({ length: total }, (_, k) => ({ body: "", subject: `s${k % 3}` })),
        );
        for (;;) {
          const got = await b.receive("big", { maxMessages: 256 });
          if (got.length === 0) break;
          // Each batch in reverse: where the clock moves during one, the newest by settlement are
          // not the highest numbers.
          for (const m of got.reverse())
            await b.complete("big", m.seqNumber, m.lockToken!, { retainMs: 3_600_000 });
        }
        const newest = async () =>
          (await b.browse({ queues: ["big"], order: "settled", limit: 1000 })).map((r) => r.seqNumber);
        const kept = (await newest()).slice(0, 100);
        steps.length = 0;
        assert.equal(await b.deleteSettled("big", { keepNewest: 100 }), total - 100);
        assert.deepEqual(await newest(), kept, "the newest 100 by settlement are the ones left");
        // The first write reads one step of keys and finds it needs more: it leaves everything to a
        // long write, which reads the completed rows' keys in three steps (the last takes 104 of
        // 2,048), then one step each for the other settled states (none).
        assert.deepEqual(
          steps.map((s) => s.size),
          Array(6).fill(MARK_STEP_ROWS),
        );
        assertTurnedBetween(steps.slice(1));
      },
    );
  });
});
