import { after, before, describe, it } from "node:test";
import { type FuzzTarget, fuzzEveryRoute, fuzzNames, fuzzTarget } from "./fuzz-rpc.js";

describe("reliability: every RPC under hostile input (soak)", () => {
  let target: FuzzTarget;
  before(async () => {
    target = await fuzzTarget();
  });
  after(() => target.close());

  it("malformed, invalid and well-shaped hostile requests, many runs per route", async () => {
    const stats = await fuzzEveryRoute(target, {
      runsPerRoute: Number(process.env.MQLITE_SOAK_FUZZ_RUNS ?? 100),
    });
    console.log(`rpc fuzz: ${JSON.stringify(stats)}`);
  });

  it("hostile names", async () => {
    const runs = 3000;
    console.log(`names fuzz: ${await fuzzNames(target, runs)} of ${runs} names accepted`);
  });
});
