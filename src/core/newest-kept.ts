import type { SettledMark } from "./verbs/records.js";

/** Whether (at, id) comes after (at2, id2) in the kept order: settled later, then a higher number. */
const newer = (at: number, id: number, at2: number, id2: number): boolean =>
  at > at2 || (at === at2 && id > id2);

/**
 * The newest `keep` of settled rows offered one by one, for retention by count when the rows are
 * read in steps: `mark()` is then the `keep`-th newest, the row deletion goes below. A min-heap
 * (the oldest of the newest at its root) of at most `keep` keys in two typed arrays, grown as rows
 * come: a million keys take 16 MB, where as many objects would take three times that.
 */
export class NewestKept {
  private at = new Float64Array(16);
  private ids = new Float64Array(16);
  private size = 0;

  constructor(private readonly keep: number) {}

  offer(settledAt: number, id: number): void {
    if (this.keep <= 0) return;
    if (this.size < this.keep) {
      if (this.size === this.at.length) this.grow();
      this.at[this.size] = settledAt;
      this.ids[this.size] = id;
      this.up(this.size++);
    } else if (newer(settledAt, id, this.at[0]!, this.ids[0]!)) {
      this.at[0] = settledAt;
      this.ids[0] = id;
      this.down(0);
    }
  }

  /** The `keep`-th newest row offered; undefined when fewer were (or `keep` is 0). */
  mark(): SettledMark | undefined {
    if (this.keep <= 0 || this.size < this.keep) return undefined;
    return { settledAt: this.at[0]!, id: this.ids[0]! };
  }

  private grow(): void {
    const length = Math.min(this.at.length * 2, this.keep);
    const at = new Float64Array(length);
    const ids = new Float64Array(length);
    at.set(this.at);
    ids.set(this.ids);
    this.at = at;
    this.ids = ids;
  }

  /** Whether the key at `i` is older than the one at `j`. */
  private older(i: number, j: number): boolean {
    return newer(this.at[j]!, this.ids[j]!, this.at[i]!, this.ids[i]!);
  }

  private swap(i: number, j: number): void {
    const at = this.at[i]!;
    const id = this.ids[i]!;
    this.at[i] = this.at[j]!;
    this.ids[i] = this.ids[j]!;
    this.at[j] = at;
    this.ids[j] = id;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.older(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.size) return;
      const right = left + 1;
      const child = right < this.size && this.older(right, left) ? right : left;
      if (!this.older(child, i)) return;
      this.swap(i, child);
      i = child;
    }
  }
}
