import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";

// The background loops on the real clock. The reaper's period is a second; these leases are far
// shorter, so each case would miss its wait most of the time if the reaper only ran every period.
describe("background loops: timed steps", () => {
  it("a lapsed lease returns its message as it lapses, not at the reaper's next period", async () => {
    const b = await openBroker(":memory:", { logger: silentLogger });
    try {
      await b.createQueue("q", { lockDurationMs: 100, maxDeliveryCount: 100 });
      await b.send("q", { body: "x" });
      let [m] = await b.receive("q");
      assert.ok(m);
      for (let round = 2; round <= 4; round++) {
        // Parked at once: the lease has 100 ms left, the wait is 600 ms.
        [m] = await b.receive("q", { waitMs: 600 });
        assert.equal(m?.deliveryCount, round, `delivery ${round} came back within the wait`);
      }
    } finally {
      await b.close();
    }
  });

  it("a message's own shorter lease is honoured as promptly as the queue's", async () => {
    const b = await openBroker(":memory:", { logger: silentLogger });
    try {
      await b.createQueue("q", { lockDurationMs: 60_000, maxDeliveryCount: 100 });
      await b.send("q", [{ body: "short", lockDurationMs: 100 }, { body: "long" }]);
      const first = await b.receive("q", { maxMessages: 2 });
      assert.equal(first.length, 2);
      for (let round = 2; round <= 4; round++) {
        const [m] = await b.receive("q", { waitMs: 600 });
        assert.equal(m?.body.toString(), "short");
        assert.equal(m?.deliveryCount, round);
      }
    } finally {
      await b.close();
    }
  });
});
