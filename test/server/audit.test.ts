import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { tokenHashId } from "../../src/server/access/tokens.js";
import { captureLogger as capture } from "../support/capture-logger.js";
import { type Served, serve } from "./harness.js";

const SECRETS = ["adm-secret", "anon-admin-secret", "mon-secret"];

describe("audit log", () => {
  let s: Served;
  const log = capture();
  before(async () => {
    s = await serve({
      tokens: ["admin:adm-secret", "anon-admin-secret", "scraper:mon-secret=monitor"],
      logger: log,
    });
  });
  after(() => s.close());

  const call = async (token: string, rpc: string, body: unknown = {}) =>
    (await s.post(`/mqlite.v1.${rpc}`, body, { authorization: `Bearer ${token}` })).status;
  /** The audit lines written since `from`. */
  const auditSince = (from: number) => log.lines.slice(from).filter((l) => l.msg === "audit");

  it("writes one line per administrative change: operation, token id, target, result", async () => {
    const from = log.lines.length;
    const admin = (rpc: string, body: unknown) => call("adm-secret", rpc, body);
    assert.equal(await admin("AdminService/CreateQueue", { name: "dlq" }), 200);
    const [seq] = await s.broker.send("dlq", [{ body: Buffer.from("x") }]);
    const [m] = await s.broker.receive("dlq");
    await s.broker.reject("dlq", m!.seqNumber, m!.lockToken!);
    assert.equal(await admin("AdminService/Redrive", { queue: "dlq" }), 200);
    const [again] = await s.broker.receive("dlq");
    await s.broker.reject("dlq", again!.seqNumber, again!.lockToken!);
    assert.equal(
      await admin("JobService/DeleteSettled", {
        queue: "dlq",
        states: ["dead_lettered"],
        seq_numbers: [seq],
      }),
      200,
    );
    assert.equal(await admin("AdminService/Purge", { queue: "dlq" }), 200);
    assert.equal(await admin("AdminService/Subscribe", { topic: "t", name: "s" }), 200);
    assert.equal(await admin("AdminService/PauseSubscription", { topic: "t", name: "s" }), 200);
    assert.equal(await admin("AdminService/ResumeSubscription", { topic: "t", name: "s" }), 200);
    assert.equal(await admin("AdminService/Unsubscribe", { topic: "t", name: "s" }), 200);
    assert.equal(await admin("JobService/PauseQueue", { name: "dlq" }), 200);
    assert.equal(await admin("JobService/ResumeQueue", { name: "dlq" }), 200);
    assert.equal(await admin("AdminService/DeleteQueue", { name: "dlq" }), 200);

    const lines = auditSince(from);
    assert.deepEqual(
      lines.map((l) => [l.level, l.obj.audit, l.obj.token_id, l.obj.target, l.obj.result, l.obj.count]),
      [
        ["info", "createQueue", "admin", { queue: "dlq" }, "ok", undefined],
        ["info", "redrive", "admin", { queue: "dlq" }, "ok", 1],
        [
          "info",
          "deleteSettled",
          "admin",
          { queue: "dlq", states: ["dead_lettered"], seq_numbers: 1 },
          "ok",
          1,
        ],
        ["info", "purge", "admin", { queue: "dlq" }, "ok", 0],
        ["info", "subscribe", "admin", { topic: "t", subscription: "s" }, "ok", undefined],
        ["info", "pauseSubscription", "admin", { topic: "t", subscription: "s" }, "ok", undefined],
        ["info", "resumeSubscription", "admin", { topic: "t", subscription: "s" }, "ok", undefined],
        ["info", "unsubscribe", "admin", { topic: "t", subscription: "s" }, "ok", undefined],
        ["info", "pauseQueue", "admin", { queue: "dlq" }, "ok", undefined],
        ["info", "resumeQueue", "admin", { queue: "dlq" }, "ok", undefined],
        ["info", "deleteQueue", "admin", { queue: "dlq" }, "ok", undefined],
      ],
    );
  });

  it("records failures and refusals with their error code, at warn", async () => {
    const from = log.lines.length;
    assert.equal(await call("adm-secret", "AdminService/DeleteQueue", { name: "missing" }), 404);
    assert.equal(await call("mon-secret", "AdminService/Purge", { queue: "anything" }), 403);
    assert.deepEqual(
      auditSince(from).map((l) => [l.level, l.obj.audit, l.obj.token_id, l.obj.target, l.obj.result]),
      [
        ["warn", "deleteQueue", "admin", { queue: "missing" }, "not_found"],
        ["warn", "purge", "scraper", { queue: "anything" }, "permission_denied"],
      ],
    );
  });

  it("names an unnamed token by its hash prefix, and never writes a token", async () => {
    const from = log.lines.length;
    assert.equal(await call("anon-admin-secret", "AdminService/CreateQueue", { name: "by-anon" }), 200);
    const [line] = auditSince(from);
    assert.equal(line?.obj.token_id, tokenHashId("anon-admin-secret"));
    const everything = JSON.stringify(log.lines);
    for (const secret of SECRETS) assert.ok(!everything.includes(secret), secret);
  });

  it("reads and message traffic are not audited", async () => {
    const from = log.lines.length;
    assert.equal(await call("mon-secret", "AdminService/ListQueues"), 200);
    await call("adm-secret", "QueueService/Send", { queue: "by-anon", messages: [{ body: "eA==" }] });
    assert.deepEqual(auditSince(from), []);
  });
});

describe("audit log with auth off", () => {
  it("has a null token id", async () => {
    const log = capture();
    const s = await serve({ tokens: [], logger: log });
    try {
      assert.equal(
        (
          await s.post(
            "/mqlite.v1.AdminService/CreateQueue",
            { name: "q" },
            { "Content-Type": "application/json" },
          )
        ).status,
        200,
      );
      const audit = log.lines.filter((l) => l.msg === "audit");
      assert.deepEqual(
        audit.map((l) => [l.obj.audit, l.obj.token_id, l.obj.result]),
        [["createQueue", null, "ok"]],
      );
    } finally {
      await s.close();
    }
  });
});
