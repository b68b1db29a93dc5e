import { describe, it } from "node:test";
import { fuzzFilters } from "./fuzz-filter.js";

describe("reliability: the filter compiler under random and adversarial sources (soak)", () => {
  it("never hangs, never throws anything but FilterCompileError or FilterRuntimeError", () => {
    const runs = Number(process.env.MQLITE_SOAK_FILTER_RUNS ?? 20_000);
    console.log(`filter fuzz: ${JSON.stringify(fuzzFilters(runs))}`);
  });
});
