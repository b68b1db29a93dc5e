import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Broker } from "../../src/contract/broker.js";
import { PermissionDeniedError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { guardBroker } from "../../src/server/access/guarded-broker.js";
import { principalResolver } from "../../src/server/access/tokens.js";
import type { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";

describe("a broker guarded by a principal's scopes", () => {
  let engine: SqliteBroker;
  const principal = (entry: string) => principalResolver([entry])(`Bearer ${entry.split("=")[0]}`)!;
  before(async () => {
    engine = await openBroker(":memory:", { background: false, logger: silentLogger });
    await engine.createQueue("jobs.a");
  });
  after(() => engine.close());

  it("refuses before the operation runs, so a refused call changes nothing", async () => {
    const guarded = guardBroker(engine, principal("t=listen:jobs.*"), silentLogger);
    await assert.rejects(guarded.send("jobs.a", [{ body: Buffer.from("x") }]), PermissionDeniedError);
    assert.equal((await engine.stats("jobs.a")).active, 0);
  });

  it("keeps methods outside the contract (close among them) from a scoped token", async () => {
    const guarded = guardBroker(engine, principal("t=monitor"), silentLogger);
    await assert.rejects(guarded.close(), /lacks the scope "manage"/);
    assert.deepEqual(
      (await engine.listQueues()).map((q) => q.name),
      ["jobs.a"],
      "still open",
    );
    assert.deepEqual(
      (await guarded.listQueues()).map((q) => q.name),
      ["jobs.a"],
    );
  });

  it("gives a full-access token the broker's own methods, bound to it", async () => {
    const guarded: Broker = guardBroker(engine, principal("t"), silentLogger);
    assert.equal(guarded.receive, guarded.receive, "bound once");
    const [seq] = await guarded.send("jobs.a", [{ body: Buffer.from("y") }]);
    assert.equal((await guarded.getMessages([seq!]))[0]?.queue, "jobs.a");
  });
});
