import { describe, it } from "node:test";
import { runLoad } from "./load.js";

describe("reliability: steady mixed load over HTTP (short form)", () => {
  it("25 s: RSS, file descriptors and the WAL stay bounded; every call succeeds", async () => {
    const report = await runLoad({ durationMs: 25_000, sampleEveryMs: 1000 });
    console.log(`load: ${JSON.stringify(report)}`);
    console.log(
      `load latency: p50 ${report.p50Ms.toFixed(1)} ms, p99 ${report.p99Ms.toFixed(1)} ms, max ${report.maxMs.toFixed(1)} ms over ${report.requests} requests`,
    );
  });
});
