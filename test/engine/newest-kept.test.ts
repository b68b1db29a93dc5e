// NewestKept: the keep-th newest (latest settled, then highest number) of rows offered in any
// order, as a sort of all of them would find it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NewestKept } from "../../src/core/newest-kept.js";

/** The keep-th newest by sorting every row. */
function bySort(rows: [number, number][], keep: number) {
  const sorted = [...rows].sort((a, b) => b[0] - a[0] || b[1] - a[1]);
  const row = keep > 0 ? sorted[keep - 1] : undefined;
  return row && { settledAt: row[0], id: row[1] };
}

/** A small deterministic generator (the test must not depend on Math.random's seed). */
function lcg(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("NewestKept", () => {
  it("finds the keep-th newest of shuffled rows with tied settlement times", () => {
    const random = lcg(7);
    for (const [n, keep] of [
      [1, 1],
      [50, 1],
      [50, 49],
      [50, 50],
      [1000, 17],
      [5000, 1200],
    ] as const) {
      // Few distinct times: many ties, broken by number.
      const rows: [number, number][] = Array.from({ length: n }, (_, id) => [
        1000 + Math.floor(random() * (n / 8 + 1)),
        id + 1,
      ]);
      for (let k = rows.length - 1; k > 0; k--) {
        const j = Math.floor(random() * (k + 1));
        [rows[k], rows[j]] = [rows[j]!, rows[k]!];
      }
      const kept = new NewestKept(keep);
      for (const [at, id] of rows) kept.offer(at, id);
      assert.deepEqual(kept.mark(), bySort(rows, keep), `n=${n} keep=${keep}`);
    }
  });

  it("has no mark while fewer than keep rows came, nor for keep 0", () => {
    const kept = new NewestKept(3);
    kept.offer(5, 1);
    kept.offer(5, 2);
    assert.equal(kept.mark(), undefined);
    kept.offer(4, 3);
    assert.deepEqual(kept.mark(), { settledAt: 4, id: 3 });
    kept.offer(6, 4);
    assert.deepEqual(kept.mark(), { settledAt: 5, id: 1 }, "an older one leaves the kept");
    const none = new NewestKept(0);
    none.offer(1, 1);
    assert.equal(none.mark(), undefined);
  });

  it("offered in the order of numbers, as steps read them, it keeps the same rows", () => {
    const random = lcg(11);
    const rows: [number, number][] = Array.from({ length: 3000 }, (_, id) => [
      Math.floor(random() * 500),
      id + 1,
    ]);
    const kept = new NewestKept(1000);
    for (const [at, id] of rows) kept.offer(at, id);
    assert.deepEqual(kept.mark(), bySort(rows, 1000));
  });
});
