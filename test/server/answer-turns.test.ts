// The answers written in slices share the event loop's turns (src/server/answer-turns.ts): a turn
// runs their slices in line until its time is spent, and the rest wait for the next turn.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ANSWER_SLICE_MS, answerTurns } from "../../src/server/answer-turns.js";

/** Keeps the thread busy for `ms` (a slice of encoding). */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("answer turns", () => {
  it("runs the slices in line, each once, and lets the event loop turn once a turn's time is spent", async () => {
    const ran: string[] = [];
    let turned = false;
    const slices = ["a", "b", "c"].map((name) =>
      answerTurns.slice((until) => {
        // A slice is given the turn's end, shared: the later in the turn, the less it has left.
        assert.ok(until - performance.now() <= ANSWER_SLICE_MS);
        if (name === "a") setImmediate(() => (turned = true));
        ran.push(`${name}${turned ? " after a turn" : ""}`);
        busy((ANSWER_SLICE_MS * 3) / 4);
      }),
    );
    await Promise.all(slices);
    assert.equal(ran.length, 3);
    assert.deepEqual(
      ran.map((r) => r[0]),
      ["a", "b", "c"],
    );
    assert.equal(ran[0], "a");
    assert.match(ran[2]!, /after a turn/, `the third slice waited for the next turn: ${ran.join(", ")}`);
  });

  it("a slice that throws fails its own answer only", async () => {
    const failing = answerTurns.slice(() => {
      throw new Error("the client went away");
    });
    let ran = false;
    const other = answerTurns.slice(() => {
      ran = true;
    });
    await assert.rejects(failing, /the client went away/);
    await other;
    assert.equal(ran, true);
  });
});
