import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { collectLines, spawnChild } from "../support/child.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe("a broker node killed with SIGKILL", () => {
  const schema = freshSchema("mqkill");
  const open = () =>
    PostgresBroker.open(PG_DSN, { schema, logger: silentLogger, leaderPollMs: 200, poolSize: 3 });
  const survivors: PostgresBroker[] = [];
  after(async () => {
    for (const s of survivors) await s.close();
    await dropSchema(schema);
  });

  it("its locks lapse and are redelivered by the survivors, and leadership moves to a survivor", async () => {
    const setup = await PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger });
    await setup.createQueue("work", { lockDurationMs: 1500, maxDeliveryCount: 5 });
    const sent = await setup.send(
      "work",
      Array.from({ length: 20 }, (_, i) => ({ body: `job-${i}` })),
    );
    await setup.close();

    // The child opens first, so it takes the leader lock; it then holds 8 messages.
    const child = spawnChild("../postgres/node-child.ts", [PG_DSN, schema, "8"]);
    const held = new Set<number>();
    let leader: boolean | undefined;
    let holding = false;
    const ended = collectLines(child, (line) => {
      if (line.startsWith("ready")) leader = line.endsWith("true");
      else if (line.startsWith("L ")) held.add(Number(line.slice(2)));
      else if (line === "holding") holding = true;
    });
    try {
      await eventually("the child to hold its messages", () => holding);
      assert.equal(leader, true, "the first node leads");

      survivors.push(await open(), await open());
      await sleep(600);
      assert.deepEqual(
        survivors.map((s) => s.isLeader),
        [false, false],
        "standbys do not lead while the leader lives",
      );

      child.kill("SIGKILL");
      const result = await ended;
      assert.equal(result.signal, "SIGKILL");
      await eventually("a survivor to take over", () => survivors.some((s) => s.isLeader));
      assert.equal(survivors.filter((s) => s.isLeader).length, 1, "exactly one leader");

      // Survivors drain the queue: the 12 free messages at once, the 8 held ones once their leases
      // lapse and the new leader's reaper requeues them.
      const completed = new Map<number, number>();
      const drain = async (broker: PostgresBroker) => {
        const until = Date.now() + 20_000;
        while (completed.size < sent.length && Date.now() < until) {
          for (const m of await broker.receive("work", { maxMessages: 5, waitMs: 300 })) {
            assert.ok(!completed.has(m.seqNumber), `${m.seqNumber} delivered after completion`);
            completed.set(m.seqNumber, m.deliveryCount);
            await broker.complete("work", m.seqNumber, m.lockToken!);
          }
        }
      };
      await Promise.all(survivors.map(drain));
      assert.deepEqual(
        [...completed.keys()].sort((x, y) => x - y),
        [...sent].sort((x, y) => x - y),
        "every message was delivered",
      );
      for (const seq of held) assert.equal(completed.get(seq), 2, `${seq} was redelivered once`);
      assert.equal((await survivors[0]!.stats("work")).total, 0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });
});
