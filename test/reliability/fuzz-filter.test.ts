import { describe, it } from "node:test";
import { fuzzFilters } from "./fuzz-filter.js";

describe("reliability: the filter compiler under random and adversarial sources (short form)", () => {
  it("never hangs, never throws anything but FilterCompileError or FilterRuntimeError", () => {
    console.log(`filter fuzz: ${JSON.stringify(fuzzFilters(1000))}`);
  });
});
