import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { collectLines, spawnChild } from "../support/child.js";
import { tempDir } from "../support/temp.js";

describe("competing consumers", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("no message goes to two holders of a live lock: 4 async consumers and 2 processes on one file", async () => {
    const path = tmp.file("compete.db");
    const broker = await openBroker(path, { background: false, logger: silentLogger });
    await broker.createQueue("work", { lockDurationMs: 120_000 });
    const total = 3000;
    const sent = new Set<number>();
    for (let i = 0; i < total; i += 100) {
      const seqs = await broker.send(
        "work",
        Array.from({ length: 100 }, (_, j) => ({ body: `m${i + j}` })),
      );
      for (const s of seqs) sent.add(s);
    }

    const procs = [0, 1].map(() => spawnChild("consumer-child.ts", [path, "work"], {}, "pipe"));
    const ready = procs.map(
      (p) =>
        new Promise<void>((resolve) => {
          p.stdout?.once("data", () => resolve());
        }),
    );
    const children = procs.map((p) => collectLines(p));
    await Promise.all(ready);
    for (const p of procs) p.stdin?.end();
    const inProcess: number[][] = [];
    const consumers = Array.from({ length: 4 }, async (_, c) => {
      const mine: number[] = [];
      inProcess[c] = mine;
      let idle = 0;
      while (idle < 20) {
        const batch = await broker.receive("work", { maxMessages: 4 });
        if (batch.length === 0) {
          idle++;
          await new Promise((r) => setTimeout(r, 10));
          continue;
        }
        idle = 0;
        for (const m of batch) {
          await broker.complete("work", m.seqNumber, m.lockToken!);
          mine.push(m.seqNumber);
        }
      }
    });
    await Promise.all(consumers);
    const results = await Promise.all(children);
    for (const r of results) assert.equal(r.code, 0, r.stderr);

    const fromChildren = results.map((r) => r.lines.filter((l) => l && l !== "ready").map(Number));
    const all = [...inProcess.flat(), ...fromChildren.flat()];
    const seen = new Set<number>();
    for (const seq of all) {
      assert.ok(!seen.has(seq), `seq ${seq} was delivered to two lock holders`);
      seen.add(seq);
    }
    assert.equal(seen.size, total);
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      [...sent].sort((a, b) => a - b),
    );
    assert.ok(
      results.every((r) => r.lines.length > 0),
      "both processes took part",
    );
    const stats = await broker.stats("work");
    assert.equal(stats.total, 0);
    await broker.close();
  });
});
