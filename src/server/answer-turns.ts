/** How long the answers' encoding runs in one turn of the event loop, all answers together. */
export const ANSWER_SLICE_MS = 4;

interface InLine {
  run: (until: number) => void;
  done: () => void;
  fail: (err: unknown) => void;
}

/**
 * The turns of the event loop that the answers encoded in slices (respond.ts) share: each turn
 * encodes for `ANSWER_SLICE_MS` in all, the answers taking slices in turn (one with more to encode
 * asks again, at the back of the line). Each answer ran a slice of its own every turn before, so
 * eight 32 MiB Peek answers at once held a turn for eight slices, and every other request (a
 * `/healthz` probe) waited 30 ms and more for it.
 */
class AnswerTurns {
  private readonly line: InLine[] = [];
  private scheduled = false;

  /** Runs `slice` (encoding until the time it is given) in a coming turn; resolves once it ran. */
  slice(slice: (until: number) => void): Promise<void> {
    return new Promise((done, fail) => {
      this.line.push({ run: slice, done, fail });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.turn);
      }
    });
  }

  private readonly turn = (): void => {
    this.scheduled = false;
    const until = performance.now() + ANSWER_SLICE_MS;
    do {
      const next = this.line.shift()!;
      try {
        next.run(until);
        next.done();
      } catch (err) {
        next.fail(err);
      }
    } while (this.line.length > 0 && performance.now() < until);
    if (this.line.length > 0) {
      this.scheduled = true;
      setImmediate(this.turn);
    }
  };
}

/** The process's answers share its event loop. */
export const answerTurns = new AnswerTurns();
