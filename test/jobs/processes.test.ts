import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { after, describe, it } from "node:test";
import { Queue } from "../../src/jobs/index.js";
import { collectLines, spawnChild } from "../support/child.js";
import { tempDir } from "../support/temp.js";
import { eventually, sleep } from "./helpers.js";

/** Starts a worker child; resolves once it printed READY. */
async function worker(path: string, args: string[] = []) {
  const child = spawnChild("job-worker-child.ts", [path, ...args]);
  const lines: string[] = [];
  let ready: () => void = () => {};
  const isReady = new Promise<void>((r) => {
    ready = r;
  });
  const done = collectLines(child, (line) => {
    lines.push(line);
    if (line.startsWith("READY")) ready();
  });
  await isReady;
  return { child, lines, done };
}

function stop(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
}

// About SQLite files and processes specifically (several worker processes on one file, a SIGKILL):
// these stay on SQLite. PostgreSQL nodes sharing one database are tested in test/postgres.
describe("jobs: worker processes sharing one file", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("two worker processes run every job exactly once while leases are live", async () => {
    const path = tmp.file("two.db");
    const producer = new Queue({ dbPath: path });
    const a = await worker(path);
    const b = await worker(path);
    const ids = await producer.enqueueMany(
      "work",
      Array.from({ length: 200 }, (_, i) => ({ args: [i % 7] })),
    );
    for (const id of ids) await producer.result(id, { timeoutMs: 30_000 });
    stop(a.child);
    stop(b.child);
    await Promise.all([a.done, b.done]);
    const starts = [...a.lines, ...b.lines].filter((l) => l.startsWith("START"));
    const byJob = new Map<string, number>();
    for (const l of starts) {
      const id = l.split(" ")[1]!;
      byJob.set(id, (byJob.get(id) ?? 0) + 1);
    }
    assert.equal(byJob.size, 200);
    assert.ok(
      [...byJob.values()].every((n) => n === 1),
      "no job ran twice",
    );
    assert.ok(
      a.lines.some((l) => l.startsWith("START")) && b.lines.some((l) => l.startsWith("START")),
      "both worked",
    );
    assert.equal((await producer.stats()).completed, 200);
    await producer.close();
  });

  it("a worker killed mid-job leaves the job to be re-run by another once its lease lapses", async () => {
    const path = tmp.file("kill.db");
    const producer = new Queue({ dbPath: path });
    const victim = await worker(path);
    const id = await producer.enqueue("work", [5000], { timeoutMs: 800 });
    await eventually(
      () => victim.lines.some((l) => l.startsWith(`START ${id}`)),
      10_000,
      "the victim to start",
    );
    victim.child.kill("SIGKILL");
    const killed = await victim.done;
    assert.equal(killed.signal, "SIGKILL");
    assert.equal((await producer.getJob(id))?.status, "running", "still leased by the dead worker");
    const rescuer = await worker(path);
    // The re-run also sleeps 5 s past its 800 ms timeout, so it fails: what matters is who ran it.
    await eventually(() => rescuer.lines.some((l) => l.startsWith(`START ${id}`)), 10_000, "the re-run");
    const line = rescuer.lines.find((l) => l.startsWith(`START ${id}`))!;
    assert.equal(line.split(" ")[3], "2", "the second attempt");
    stop(rescuer.child);
    await rescuer.done;
    await producer.close();
  });

  it("a periodic job fires once per tick across worker processes", async () => {
    const path = tmp.file("periodic.db");
    const a = await worker(path, ["--periodic"]);
    const b = await worker(path, ["--periodic"]);
    await sleep(3500);
    stop(a.child);
    stop(b.child);
    await Promise.all([a.done, b.done]);
    const ticks = [...a.lines, ...b.lines].filter((l) => l.startsWith("TICK"));
    const q = new Queue({ dbPath: path });
    const jobs = await q.listJobs({ task: "tick" });
    await q.close();
    assert.ok(jobs.length >= 2, `${jobs.length} ticks`);
    const tickTimes = jobs.map((j) => Number(j.uniqueKey!.split(":").at(-1))).sort((x, y) => x - y);
    assert.equal(new Set(tickTimes).size, tickTimes.length, "one job per tick");
    for (let i = 1; i < tickTimes.length; i++) assert.ok(tickTimes[i]! - tickTimes[i - 1]! >= 1000);
    const ran = new Set(ticks.map((l) => l.split(" ")[1]));
    assert.equal(ran.size, ticks.length, "no tick job ran twice");
  });
});
