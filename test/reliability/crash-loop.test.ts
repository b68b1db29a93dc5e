import { describe, it } from "node:test";
import { runCrashLoop } from "./crash-loop.js";

describe("reliability: crash loop (short form)", () => {
  it("mqlite serve killed with SIGKILL 5 times under mixed load keeps every acknowledged effect", async () => {
    const t0 = Date.now();
    const report = await runCrashLoop({
      kills: 5,
      minRunMs: 300,
      maxRunMs: 1500,
      log: (line) => console.log(`${Date.now() - t0} ms: ${line}`),
    });
    console.log(`crash loop: ${JSON.stringify(report)}`);
  });
});
