import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { after, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { openBroker } from "../../src/open.js";
import { tempDir } from "../support/temp.js";

const N = Number(process.env.MQLITE_INTEGRITY_N ?? 10_000);

describe("integrity", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it(`3.4 ${N} random bodies, concurrent consumers with random abandons and lock expiries: each completed once, intact`, async () => {
    const clock = new ManualClock();
    const broker = await openBroker(tmp.file("integrity.db"), {
      clock,
      background: false,
      logger: silentLogger,
    });
    await broker.createQueue("q", { lockDurationMs: 5000, maxDeliveryCount: 1000 });
    for (let i = 0; i < N; i += 250) {
      await broker.send(
        "q",
        Array.from({ length: Math.min(250, N - i) }, (_, k) => {
          const body = randomBytes(1 + Math.floor(Math.random() * 512));
          return {
            body,
            messageId: String(i + k),
            properties: { sha256: createHash("sha256").update(body).digest("hex"), index: String(i + k) },
          };
        }),
      );
    }

    const completed = new Map<number, number>();
    let abandons = 0;
    let forgotten = 0;
    let lost = 0;
    const consumer = async () => {
      let idle = 0;
      while (idle < 3) {
        const batch = await broker.receive("q", { maxMessages: 16 });
        if (batch.length === 0) {
          idle++;
          // Let the held locks lapse, then reap them back into the queue.
          clock.advance(5000);
          await broker.runMaintenanceOnce();
          continue;
        }
        idle = 0;
        for (const m of batch) {
          const hash = createHash("sha256").update(m.body).digest("hex");
          assert.equal(hash, m.properties?.sha256, `body of message ${m.messageId} is corrupt`);
          const roll = Math.random();
          if (roll < 0.1) {
            abandons++;
            await broker.abandon("q", m.seqNumber, m.lockToken!).catch((err) => {
              assert.equal(err.code, "lock_lost");
            });
          } else if (roll < 0.15) {
            forgotten++; // the consumer "dies": the lock must lapse and the message come back
          } else {
            try {
              await broker.complete("q", m.seqNumber, m.lockToken!);
              const index = Number(m.properties?.index);
              completed.set(index, (completed.get(index) ?? 0) + 1);
            } catch (err) {
              assert.equal((err as { code?: string }).code, "lock_lost");
              lost++; // the lock lapsed under us (another consumer advanced the clock): redelivered later
            }
          }
        }
      }
    };
    await Promise.all(Array.from({ length: 4 }, consumer));

    assert.equal(completed.size, N, "every message was completed");
    for (const [index, times] of completed)
      assert.equal(times, 1, `message ${index} completed ${times} times`);
    assert.ok(abandons > 0 && forgotten > 0, "the run exercised abandons and lock expiries");
    assert.equal((await broker.stats("q")).total, 0);
    void lost;
    await broker.close();
  });
});
