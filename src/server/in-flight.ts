import type { Server } from "node:http";

/** Counts requests between arrival and their response's end, so that a stop can wait for them. */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  /** Counts every request of `server`. */
  track(server: Server): void {
    server.on("request", (_req, res) => {
      this.count++;
      res.once("close", () => {
        this.count--;
        if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
      });
    });
  }

  get size(): number {
    return this.count;
  }

  /** Resolves once no request is in flight. */
  idle(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
