import { after, before, describe, it } from "node:test";
import { type FuzzTarget, fuzzEveryRoute, fuzzNames, fuzzTarget } from "./fuzz-rpc.js";

describe("reliability: every RPC under hostile input (short form)", () => {
  let target: FuzzTarget;
  before(async () => {
    target = await fuzzTarget();
  });
  after(() => target.close());

  it("malformed, invalid and well-shaped hostile requests: a documented 4xx or a success, never a 5xx; refusals change nothing", async () => {
    const stats = await fuzzEveryRoute(target, { runsPerRoute: 5 });
    console.log(`rpc fuzz: ${JSON.stringify(stats)}`);
  });

  it("hostile names: what CreateQueue or Subscribe accepts is reached by the same name everywhere", async () => {
    const accepted = await fuzzNames(target, 150);
    console.log(`names fuzz: ${accepted} of 150 names accepted`);
  });
});
