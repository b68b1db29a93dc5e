import { describe, it } from "node:test";
import { runCrashLoop } from "./crash-loop.js";

describe("reliability: crash loop (soak)", () => {
  it("mqlite serve killed with SIGKILL 50 times under mixed load keeps every acknowledged effect", async () => {
    const t0 = Date.now();
    const report = await runCrashLoop({
      kills: Number(process.env.MQLITE_SOAK_KILLS ?? 50),
      minRunMs: 200,
      maxRunMs: 3000,
      log: (line) => console.log(`${Date.now() - t0} ms: ${line}`),
    });
    console.log(`crash loop: ${JSON.stringify(report)}`);
  });
});
