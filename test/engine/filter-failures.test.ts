import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NotFoundError } from "../../src/contract/errors.js";
import { openBroker } from "../../src/open.js";
import { captureLogger } from "../support/capture-logger.js";

// A subscription filter that fails at run time routes nowhere (fail-closed) and is logged: once per
// committed publish, and never for a publish whose transaction rolled back.
describe("filters failing at run time", () => {
  const open = async () => {
    const logger = captureLogger();
    const b = await openBroker(":memory:", { background: false, logger });
    await b.subscribe("t", "amount", { filter: "body_json.amount > 100" });
    await b.subscribe("t", "all");
    return { b, logger };
  };

  it("a failing filter is logged once with its topic and subscription", async () => {
    const { b, logger } = await open();
    await b.send("t", { body: "not json" });
    const problems = logger.problems();
    assert.equal(problems.length, 1);
    assert.equal(problems[0]!.level, "warn");
    assert.deepEqual(
      { ...problems[0]!.obj, err: typeof problems[0]!.obj.err },
      { topic: "t", subscription: "amount", err: "string" },
    );
    assert.match(problems[0]!.msg ?? "", /filter failed at run time/);
    assert.equal((await b.stats("amount")).total, 0);
    assert.equal((await b.stats("all")).total, 1);
    await b.close();
  });

  it("a publish replayed with its group after another write failed logs once", async () => {
    const { b, logger } = await open();
    // Issued together: one group. The failing send rolls the group back; the publish runs again.
    const [published, failed] = await Promise.allSettled([
      b.send("t", { body: "not json" }),
      b.send("missing", { body: "x" }),
    ]);
    assert.equal(published.status, "fulfilled");
    assert.equal(failed.status, "rejected");
    assert.ok((failed as PromiseRejectedResult).reason instanceof NotFoundError);
    assert.equal(logger.problems().length, 1);
    assert.equal((await b.stats("all")).total, 1);
    await b.close();
  });

  it("a publish inside a transaction that rolls back logs nothing", async () => {
    const { b, logger } = await open();
    await assert.rejects(
      b.tx((t) => {
        t.send("t", { body: "not json" });
        throw new Error("the application gives up");
      }),
      /the application gives up/,
    );
    assert.equal(logger.problems().length, 0);
    assert.equal((await b.stats("all")).total, 0);
    await b.close();
  });
});
