import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { Broker } from "../../../src/contract/broker.js";
import { consume, DeadLetterError } from "../../../src/contract/consume.js";
import { InternalError, LockLostError, NotFoundError } from "../../../src/contract/errors.js";
import type { Message } from "../../../src/contract/types.js";
import { eventually, sleep } from "../../support/eventually.js";
import { bodies } from "../helpers.js";
import type { Subject } from "../subject.js";
import { cases } from "../suite.js";

/** A promise and its resolver: a handler that waits until the test lets it go. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

cases((factory) => {
  describe("§C consume: the consumer loop over any broker", () => {
    let s: Subject;
    beforeEach(async () => {
      s = await factory();
      await s.broker.createQueue("q", { lockDurationMs: 1000, maxDeliveryCount: 3 });
    });
    afterEach(() => s.close());

    it("C.1 completes each message whose handler resolves, never running more than `concurrency` at once", async () => {
      await s.broker.send(
        "q",
        ["a", "b", "c", "d", "e", "f"].map((body) => ({ body })),
      );
      let now = 0;
      let most = 0;
      const seen: string[] = [];
      const c = s.broker.consume(
        "q",
        async (m) => {
          most = Math.max(most, ++now);
          seen.push(m.body.toString());
          await sleep(15);
          now--;
        },
        { concurrency: 2, waitMs: 100 },
      );
      await eventually(
        async () => (await s.broker.stats("q")).total === 0,
        10_000,
        "every message completed",
      );
      await c.stop();
      await c.finished;
      assert.deepEqual(seen.sort(), ["a", "b", "c", "d", "e", "f"]);
      assert.equal(most, 2);
    });

    it("C.2 a thrown error abandons (redelivered up to the limit); a DeadLetterError rejects with its reason", async () => {
      await s.broker.send("q", [{ body: "flaky" }, { body: "poison" }]);
      const deliveries: Record<string, number> = {};
      const c = s.broker.consume(
        "q",
        (m) => {
          const body = m.body.toString();
          deliveries[body] = m.deliveryCount;
          if (body === "poison") throw new DeadLetterError("Poison", "cannot parse");
          throw new Error("not yet");
        },
        { concurrency: 2, waitMs: 100 },
      );
      await eventually(
        async () => (await s.broker.stats("q")).deadLettered === 2,
        10_000,
        "both dead-lettered",
      );
      await c.stop();
      const dead = await s.broker.peek("q", { state: "dead_lettered" });
      assert.deepEqual(
        dead.map((m) => [m.body.toString(), m.deadLetterReason, m.deadLetterDescription, m.deliveryCount]),
        [
          ["flaky", "MaxDeliveryCountExceeded", undefined, 3],
          ["poison", "Poison", "cannot parse", 1],
        ],
      );
      assert.deepEqual(deliveries, { flaky: 3, poison: 1 });
    });

    it("C.3 renews the lease of a running handler; stops renewing once the lease is lost", async () => {
      await s.broker.send("q", { body: "slow" });
      const release = gate();
      let held: Message | undefined;
      const errors: unknown[] = [];
      const c = s.broker.consume(
        "q",
        async (m) => {
          held = m;
          await release.opened;
        },
        { renewIntervalMs: 20, waitMs: 100, onError: (e) => errors.push(e) },
      );
      await eventually(() => held !== undefined, 10_000, "the handler started");
      const first = held!.lockedUntil!;
      s.clock.advance(600);
      await eventually(
        async () => ((await s.broker.peek("q"))[0]?.lockedUntil ?? 0) >= first + 600,
        10_000,
        "the lease was renewed from the advanced clock",
      );
      // Someone else settles it: the next renewal is lock_lost, and renewing stops there.
      await s.broker.complete("q", held!.seqNumber, held!.lockToken!);
      await eventually(() => errors.length > 0, 10_000, "the lost lease reported");
      await sleep(150);
      assert.equal(errors.length, 1, "one lock_lost, then no more renewals");
      assert.ok(errors[0] instanceof LockLostError);
      release.open();
      await c.stop();
      // Its own complete is the same request as the one made above: the receipt answers it.
      assert.equal(errors.length, 1);
      await c.finished;
    });

    it("C.4 stop lets running handlers finish and releases the prefetched messages uncounted", async () => {
      await s.broker.send("q", [{ body: "a" }, { body: "b" }, { body: "c" }]);
      const release = gate();
      const started: string[] = [];
      let aborted = false;
      const c = s.broker.consume(
        "q",
        async (m, ctx) => {
          started.push(m.body.toString());
          await release.opened;
          aborted = ctx.signal.aborted;
        },
        { concurrency: 1, prefetch: 2, waitMs: 100 },
      );
      await eventually(async () => (await s.broker.stats("q")).locked === 3, 10_000, "3 claimed");
      const stopped = c.stop();
      await sleep(30);
      assert.equal((await s.broker.stats("q")).total, 3, "the running handler is not cut short");
      release.open();
      await stopped;
      assert.deepEqual(started, ["a"]);
      assert.equal(aborted, true, "the handler's signal tells it the consumer is stopping");
      const left = await s.broker.peek("q");
      assert.deepEqual(
        left.map((m) => [m.body.toString(), m.state, m.deliveryCount]),
        [
          ["b", "active", 0],
          ["c", "active", 0],
        ],
      );
    });

    it("C.5 an aborted signal stops it; a permanent error (unknown queue) ends it with that error", async () => {
      const ac = new AbortController();
      const c = s.broker.consume("q", () => {}, { signal: ac.signal, waitMs: 20_000 });
      await sleep(30);
      ac.abort();
      await c.finished;
      const gone = s.broker.consume("nope", () => {}, { waitMs: 100 });
      await assert.rejects(gone.finished, NotFoundError);
    });

    it("C.6 backs off on receive errors and carries on once receives succeed again", async () => {
      await s.broker.send("q", { body: "x" });
      let failures = 3;
      const flaky = new Proxy(s.broker, {
        get(target, key, receiver) {
          if (key === "receive")
            return (...args: Parameters<Broker["receive"]>) => {
              if (failures-- > 0) return Promise.reject(new InternalError("mqlite: store unavailable"));
              return target.receive(...args);
            };
          const v = Reflect.get(target, key, receiver);
          return typeof v === "function" ? v.bind(target) : v;
        },
      });
      const errors: number[] = [];
      const done: string[] = [];
      const c = consume(flaky, "q", (m) => void done.push(m.body.toString()), {
        waitMs: 100,
        onError: () => errors.push(Date.now()),
      });
      await eventually(() => done.length === 1, 10_000, "handled after the failures");
      await c.stop();
      assert.equal(errors.length, 3);
      const gaps = [errors[1]! - errors[0]!, errors[2]! - errors[1]!];
      assert.ok(gaps[0]! >= 90 && gaps[1]! >= 190, `growing pauses between retries: ${gaps}`);
      assert.deepEqual(bodies(await s.broker.peek("q")), []);
    });
  });
});
