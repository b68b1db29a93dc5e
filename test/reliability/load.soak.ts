import { describe, it } from "node:test";
import { runLoad } from "./load.js";

describe("reliability: steady mixed load over HTTP (soak)", () => {
  it("10 minutes: RSS, file descriptors and the WAL stay bounded; every call succeeds", async () => {
    const durationMs = Number(process.env.MQLITE_SOAK_LOAD_MS ?? 600_000);
    const report = await runLoad({
      durationMs,
      sampleEveryMs: 5000,
      log: (line) => console.log(line),
    });
    console.log(`load: ${JSON.stringify(report)}`);
    console.log(
      `load latency: p50 ${report.p50Ms.toFixed(1)} ms, p99 ${report.p99Ms.toFixed(1)} ms, max ${report.maxMs.toFixed(1)} ms over ${report.requests} requests`,
    );
  });
});
