const REDRAW_MS = 100;
const BAR = 24;

/**
 * A progress line on stderr for long operations, drawn only when stderr is a terminal (never in
 * a pipe or a log). `total` may be unknown (a stream): then only the count is shown.
 */
export class Progress {
  private done = 0;
  private drawnAt = 0;
  private readonly live: boolean;

  constructor(
    private readonly label: string,
    private total: number | undefined = undefined,
    private readonly out: NodeJS.WriteStream = process.stderr,
  ) {
    this.live = out.isTTY === true;
  }

  /** Whether anything is drawn (a terminal). */
  get visible(): boolean {
    return this.live;
  }

  setTotal(total: number): void {
    this.total = total;
  }

  /** Adds `n` units of work done (and, for a stream, a new fraction known from `ratio`). */
  add(n: number, ratio?: number): void {
    this.done += n;
    if (!this.live) return;
    const now = Date.now();
    if (now - this.drawnAt < REDRAW_MS) return;
    this.drawnAt = now;
    this.draw(ratio);
  }

  private draw(ratio?: number): void {
    const fraction = ratio ?? (this.total ? Math.min(1, this.done / this.total) : undefined);
    let line = `${this.label} ${this.done}${this.total !== undefined ? `/${this.total}` : ""}`;
    if (fraction !== undefined) {
      const filled = Math.round(fraction * BAR);
      line = `${this.label} [${"#".repeat(filled)}${".".repeat(BAR - filled)}] ${Math.floor(fraction * 100)}% ${this.done}${this.total !== undefined ? `/${this.total}` : ""}`;
    }
    this.out.write(`\r${line}\u001b[K`);
  }

  /** Draws the final state and ends the line. */
  finish(): void {
    if (!this.live) return;
    this.draw(this.total === undefined ? 1 : undefined);
    this.out.write("\n");
  }
}
