// One check of the two reads retention by count is built on, for each dialect's statements (the
// core finds its mark with one of them on each: keptMark on PostgreSQL, settledKeys in steps on
// SQLite; the other is checked here so that neither dialect holds an op nothing tests).
import assert from "node:assert/strict";
import type { MessageState } from "../../src/contract/types.js";
import type { SettledMark, SettledMatch } from "../../src/core/verbs/records.js";

/** The two reads, sync or async. */
export interface SettledReads {
  keptMark(
    a: SettledMatch & { states: MessageState[]; keep: number },
  ): SettledMark | undefined | Promise<SettledMark | undefined>;
  settledKeys(
    a: SettledMatch & { state: MessageState; after: number; limit: number },
  ): [number, number][] | Promise<[number, number][]>;
}

/** A settled row as the check writes it into queue "q". */
export interface SettledRow {
  state: MessageState;
  subject: string;
  settledAt: number;
}

/** 40 rows of two states and two subjects, settlement times with ties, in no order of number. */
export const SETTLED_ROWS: SettledRow[] = Array.from({ length: 40 }, (_, k) => ({
  state: k % 4 === 0 ? "cancelled" : "completed",
  subject: k % 3 === 0 ? "x" : "y",
  settledAt: 1000 + ((k * 7) % 13),
}));

/** Checks both reads against the rows written, `ids[k]` the number of `SETTLED_ROWS[k]`. */
export async function checkSettledReads(ops: SettledReads, ids: number[]): Promise<void> {
  const rows = SETTLED_ROWS.map((r, k) => ({ ...r, id: ids[k]! }));
  const newestFirst = (a: { settledAt: number; id: number }, b: { settledAt: number; id: number }) =>
    b.settledAt - a.settledAt || b.id - a.id;

  for (const [states, subject, keep] of [
    [["completed"], undefined, 1],
    [["completed", "cancelled"], undefined, 7],
    [["completed"], "y", 5],
    [["cancelled"], "x", 2],
    [["completed", "cancelled"], undefined, 40],
  ] as [MessageState[], string | undefined, number][]) {
    const matching = rows.filter(
      (r) => states.includes(r.state) && (subject === undefined || r.subject === subject),
    );
    const expected = matching.sort(newestFirst)[keep - 1];
    const got = await ops.keptMark({ queue: "q", states, keep, ...(subject !== undefined && { subject }) });
    assert.deepEqual(
      got,
      expected && { settledAt: expected.settledAt, id: expected.id },
      `${states} ${subject} ${keep}`,
    );
  }
  assert.equal(
    await ops.keptMark({ queue: "q", states: ["completed"], keep: 41 }),
    undefined,
    "fewer than keep",
  );
  assert.equal(
    await ops.keptMark({ queue: "other", states: ["completed"], keep: 1 }),
    undefined,
    "another queue",
  );

  const completedY = rows
    .filter((r) => r.state === "completed" && r.subject === "y")
    .sort((a, b) => a.id - b.id)
    .map((r) => [r.settledAt, r.id]);
  const after = completedY[2]![1]!;
  assert.deepEqual(
    await ops.settledKeys({ queue: "q", state: "completed", subject: "y", after, limit: 4 }),
    completedY.slice(3, 7),
    "four after the third, in order of number",
  );
  assert.deepEqual(
    await ops.settledKeys({ queue: "q", state: "completed", subject: "y", after: 0, limit: 1000 }),
    completedY,
  );
  const old = rows.filter((r) => r.state === "cancelled" && r.settledAt < 1005).sort((a, b) => a.id - b.id);
  assert.deepEqual(
    await ops.settledKeys({ queue: "q", state: "cancelled", settledBefore: 1005, after: 0, limit: 100 }),
    old.map((r) => [r.settledAt, r.id]),
    "settled before",
  );
  assert.deepEqual(
    await ops.settledKeys({
      queue: "q",
      state: "completed",
      seqNumbers: [ids[1]!, ids[2]!, ids[0]!],
      after: 0,
      limit: 100,
    }),
    rows
      .slice(0, 3)
      .filter((r) => r.state === "completed")
      .sort((a, b) => a.id - b.id)
      .map((r) => [r.settledAt, r.id]),
    "these numbers only",
  );
}
