import assert from "node:assert/strict";
import http from "node:http";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import type { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";
import { AUTH, TOKEN } from "./harness.js";

/**
 * A broker whose claims answer only when the test lets them, so that the client can go away
 * between the claim and the answer (the window a real server hits by chance).
 */
function heldClaims(broker: SqliteBroker) {
  let claimed!: () => void;
  let release!: () => void;
  const state = {
    claimed: new Promise<void>((r) => {
      claimed = r;
    }),
    gate: new Promise<void>((r) => {
      release = r;
    }),
    release: () => release(),
  };
  const held = async <T>(claim: Promise<T>) => {
    const got = await claim;
    claimed();
    await state.gate;
    return got;
  };
  const proxy = new Proxy(broker, {
    get(target, key) {
      if (key === "receive")
        return (q: string, o: object) => held(target.receive(q, { ...o, signal: undefined }));
      if (key === "receiveAny")
        return (qs: string[], o: object) => held(target.receiveAny(qs, { ...o, signal: undefined }));
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as unknown as Broker;
  return { proxy, state };
}

/** POSTs `body` to `rpc` and destroys the connection once `claimed` resolves, before any answer. */
async function abandonAfterClaim(url: string, rpc: string, body: unknown, claimed: Promise<void>) {
  const req = http.request(`${url}/mqlite.v1.${rpc}`, {
    method: "POST",
    headers: { ...AUTH, "content-type": "application/json" },
  });
  req.on("error", () => {});
  let answered = false;
  req.on("response", () => {
    answered = true;
  });
  req.end(JSON.stringify(body));
  await claimed;
  req.destroy();
  // Let the server see the connection close before the claim answers.
  await sleep(100);
  return () => answered;
}

/** A fresh broker for each test: the server closes the broker it serves. */
async function fresh(): Promise<SqliteBroker> {
  const broker = await openBroker(":memory:", { background: false, logger: silentLogger });
  await broker.createQueue("q", { lockDurationMs: 60_000 });
  await broker.createQueue("r", { lockDurationMs: 60_000 });
  return broker;
}

describe("an answer that cannot be delivered gives its locked messages back", () => {
  for (const [rpc, queue, body] of [
    ["QueueService/Receive", "q", { queue: "q", max_messages: 2 }],
    ["JobService/ReceiveAny", "r", { queues: ["r"], max_messages: 2 }],
  ] as const) {
    it(`${rpc}: the client gone before the answer, the messages are back at once, delivery uncounted`, async () => {
      const broker = await fresh();
      const { proxy, state } = heldClaims(broker);
      const server: RunningServer = await startServer({
        broker: proxy,
        port: 0,
        tokens: [TOKEN],
        logger: silentLogger,
      });
      try {
        await broker.send(queue, [{ body: "a" }, { body: "b" }]);
        const answered = await abandonAfterClaim(server.url, rpc, body, state.claimed);
        assert.equal((await broker.peek(queue)).filter((m) => m.state === "locked").length, 2);
        state.release();
        const back = await broker.receive(queue, { maxMessages: 2, waitMs: 2000 });
        assert.equal(answered(), false);
        assert.deepEqual(
          back.map((m) => [m.body.toString(), m.deliveryCount]),
          [
            ["a", 1],
            ["b", 1],
          ],
        );
        await broker.completeBatch(
          queue,
          back.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken! })),
        );
      } finally {
        state.release();
        await server.close();
      }
    });
  }

  it("an answer the client reads keeps its messages locked", async () => {
    const broker = await fresh();
    const server = await startServer({ broker, port: 0, tokens: [TOKEN], logger: silentLogger });
    try {
      await broker.send("q", { body: "kept" });
      const res = await fetch(`${server.url}/mqlite.v1.QueueService/Receive`, {
        method: "POST",
        headers: AUTH,
        body: JSON.stringify({ queue: "q" }),
      });
      const { messages } = (await res.json()) as { messages: { seq_number: number; lock_token: string }[] };
      assert.equal(messages.length, 1);
      await sleep(100);
      assert.deepEqual(
        (await broker.peek("q")).map((m) => m.state),
        ["locked"],
      );
      await broker.complete("q", messages[0]!.seq_number, messages[0]!.lock_token);
    } finally {
      await server.close();
    }
  });
});
